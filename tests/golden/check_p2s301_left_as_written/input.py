import paddle
from paddle.autograd import PyLayer


class Broken(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy, dz):
        return dy * 2.0


class Derived(Broken):
    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x, alpha=2.0):
        return x * alpha

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


x = paddle.ones([2])
a = Broken.apply(x)
b = Derived.apply(x)
c = Scale.apply(x)
d = Scale.apply(x, beta=3.0)
