import paddle
from paddle.autograd import PyLayer


class Broken(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy, dz):
        return dy * 2.0


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


def run(layer_cls, x):
    return layer_cls.apply(x)


y = run(Scale, paddle.ones([2]))
z = run(Broken, paddle.ones([2]))
w = Scale.apply(paddle.ones([2]))
