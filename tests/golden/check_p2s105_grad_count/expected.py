import paddle
from paddle.autograd import PyLayer


class Pair(PyLayer):
    @staticmethod
    def forward(ctx, x):
        a = paddle.tanh(x)
        b = paddle.exp(x)
        ctx.save_for_backward(a, b)
        return a, b

    @staticmethod
    def backward(ctx, da):
        a, b = ctx.saved_tensor()
        return da * (1 - a * a)


class Single(PyLayer):
    @staticmethod
    def forward(ctx, x, scale):
        return (x * scale,)

    @staticmethod
    def backward(ctx, dy, dz):
        return dy * 2.0


p = Pair.apply(paddle.ones([2]))
s = Single.apply(paddle.ones([2]), 3.0)
