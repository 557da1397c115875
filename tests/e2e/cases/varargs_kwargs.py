"""Forward with *args and **kwargs: every tensor among them is an op input."""
import paddle
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
        return WeightedSum.apply(h, y, h * 2.0, alpha=0.5, bias=y * y)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True)]
