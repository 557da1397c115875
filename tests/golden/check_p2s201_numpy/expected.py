import numpy as np; import pylayer2static_runtime as _p2s
import paddle
from paddle.autograd import PyLayer


class NpTanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.to_tensor(np.tanh(x.numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - y * y)


out = _p2s.apply(NpTanh, paddle.ones([2]))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(NpTanh)
def _p2s_static_NpTanh(x):
    """NpTanh.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(NpTanh, (x,), {})
    return op.build(forward=NpTanh.forward, backward=NpTanh.backward)
# pylayer2static 0.1.0
