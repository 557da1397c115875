"""Name-mangled attributes: `ctx.__scale` set in forward and read in backward, a private
class attribute `Cls.__k` and a private static helper `Cls.__grad` used in the bodies."""
import paddle
from paddle.autograd import PyLayer


class Private(PyLayer):
    __k = 1.5

    @staticmethod
    def __grad(dy, x):
        return dy * 2.0 * x * Private.__k

    @staticmethod
    def forward(ctx, x):
        ctx.__scale = Private.__k
        ctx.__x = x
        return x * x * ctx.__scale

    @staticmethod
    def backward(ctx, dy):
        return Private.__grad(dy, ctx.__x) * (ctx.__scale / Private.__k)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return Private.apply(self.linear(x))


INPUTS = [([2, 4], "float32", True)]
