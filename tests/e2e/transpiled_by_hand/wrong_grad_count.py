"""Backward returns one gradient too many (PyLayer rule 5), in a way only the run can tell."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Spread(PyLayer):
    @staticmethod
    def forward(ctx, *xs):
        ctx.count = len(xs)
        return xs[0] + xs[1]

    @staticmethod
    def backward(ctx, dy):
        return tuple(dy for _ in range(ctx.count + 1))


class Model(paddle.nn.Layer):
    def forward(self, x):
        return _p2s.apply(Spread, x, x * 2.0)


INPUTS = [([2, 4], "float32", True)]


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(Spread)
def _p2s_static_Spread(*xs):
    """Spread.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Spread, (*xs,), {})
    return op.build(forward=Spread.forward, backward=Spread.backward)
# pylayer2static 0.1.0
