"""Several saved tensors and every way of unpacking saved_tensor(): tuple targets, a
1-tuple, indexing, star unpacking, iteration, a saved non-tensor and a saved input."""
import paddle
from paddle.autograd import PyLayer


class Poly(PyLayer):
    @staticmethod
    def forward(ctx, x, w):
        sq = x * x
        cube = sq * x
        ctx.save_for_backward(x, w, sq, cube)
        return cube * w + sq

    @staticmethod
    def backward(ctx, dy):
        x, w, sq, cube = ctx.saved_tensor()
        saved = ctx.saved_tensor()
        first, *rest = ctx.saved_tensor()
        total = paddle.zeros_like(dy)
        for t in ctx.saved_tensor()[2:]:
            total = total + t * 0.0
        dx = dy * (3.0 * saved[2] * rest[0] + 2.0 * first) + total
        dw = dy * ctx.saved_tensor()[3]
        return dx, dw


class Single(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1.0 - y * y)


class WithNone(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(None, x, 2.5)
        return x * 2.5

    @staticmethod
    def backward(ctx, dy):
        nothing, x, k = ctx.saved_tensor()
        assert nothing is None
        return dy * k + x * 0.0


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, w):
        h = self.linear(x)
        return Poly.apply(h, w) + Single.apply(h) + WithNone.apply(h)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True)]
