"""A PyLayer called inside another PyLayer's forward and backward; classes nested in a class."""
import paddle
from paddle.autograd import PyLayer


class Square(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 2.0 * x


class Ops:
    class Poly(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return Square.apply(x) + x

        @staticmethod
        def backward(ctx, dy):
            x, = ctx.saved_tensor()
            return dy * (Square.apply(x) * 0.0 + 2.0 * x + 1.0)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return Ops.Poly.apply(self.linear(x))


INPUTS = [([2, 4], "float32", True)]
