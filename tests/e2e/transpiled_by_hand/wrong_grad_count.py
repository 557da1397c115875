"""Backward returns two gradients for forward's one tensor input (PyLayer rule 5)."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Twice(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0, dy


class Model(paddle.nn.Layer):
    def forward(self, x):
        return _p2s.apply(Twice, x)


INPUTS = [([2, 4], "float32", True)]


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(Twice)
def _p2s_static_Twice(x):
    """Twice.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Twice, (x,), {})
    return op.build(forward=Twice.forward, backward=Twice.backward)
# pylayer2static 0.1.0
