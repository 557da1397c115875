"""Backward returns None for an input that needs a gradient and for a stop_gradient input."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class MulAdd(PyLayer):
    @staticmethod
    def forward(ctx, x, y, z):
        ctx.save_for_backward(x, y)
        return x * y + z

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensor()
        return dy * y, None, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, y, z):
        return _p2s.apply(MulAdd, self.linear(x), y, z)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True), ([2, 3], "float32", False)]


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(MulAdd)
def _p2s_static_MulAdd(x, y, z):
    """MulAdd.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(MulAdd, (x, y, z), {})
    return op.build(forward=MulAdd.forward, backward=MulAdd.backward)
# pylayer2static 0.1.0
