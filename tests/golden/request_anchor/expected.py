import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer
from paddle.jit import to_static


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


class SimpleNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    @to_static
    def forward(self, x):
        y = self.linear(x)
        out = _p2s.apply(cus_tanh, y)
        return paddle.mean(out)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(cus_tanh)
def _p2s_static_cus_tanh(x):
    """cus_tanh.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(cus_tanh, (x,), {})
    return op.build(forward=cus_tanh.forward, backward=cus_tanh.backward)
# pylayer2static 0.1.0
