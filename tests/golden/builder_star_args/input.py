import paddle
from paddle.autograd import PyLayer


class Spread(PyLayer):
    @staticmethod
    def forward(ctx, *xs):
        return tuple(x * 2 for x in xs)

    @staticmethod
    def backward(ctx, *grads):
        return tuple(g * 2 for g in grads)


class Keywords(PyLayer):
    @staticmethod
    def forward(ctx, **named):
        return named["x"] * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


a, b = Spread.apply(paddle.ones([1]), paddle.ones([1]))
c = Keywords.apply(x=paddle.ones([1]))
