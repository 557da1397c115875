"""Several PyLayers in one file, chained: the output of one is the input of the next, and
one of them takes two PyLayer outputs."""
import paddle
from paddle.autograd import PyLayer


class Exp(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * y


class Log1p(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.log(1.0 + x)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy / (1.0 + x)


class Mul(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensor()
        return dy * b, dy * a


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        e = Exp.apply(h)
        return Mul.apply(Log1p.apply(e), e)


INPUTS = [([2, 4], "float32", True)]
