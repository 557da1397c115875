"""Forward with *args and **kwargs: every tensor among them is an op input."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class WeightedSum(PyLayer):
    @staticmethod
    def forward(ctx, first, *rest, alpha=1.0, **extra):
        ctx.alpha = alpha
        ctx.count = len(rest)
        out = first * alpha
        for t in rest:
            out = out + t
        return out + extra["bias"]

    @staticmethod
    def backward(ctx, dy):
        return (dy * ctx.alpha,) + tuple(dy for _ in range(ctx.count)) + (dy,)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, y):
        h = self.linear(x)
        return _p2s.apply(WeightedSum, h, y, h * 2.0, alpha=0.5, bias=y * y)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True)]


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(WeightedSum)
def _p2s_static_WeightedSum(first, *rest, alpha=_p2s.DEFAULT, **extra):
    """WeightedSum.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(WeightedSum, (first, *rest), {'alpha': alpha, **extra})
    return op.build(forward=WeightedSum.forward, backward=WeightedSum.backward)
# pylayer2static 0.1.0
