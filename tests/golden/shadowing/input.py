import paddle
from paddle.autograd import PyLayer


class Real(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


def uses_parameter(Real):
    return Real.apply(1)


def uses_local():
    Real = make_other()
    return Real.apply(2)


def uses_module():
    return Real.apply(paddle.ones([1]))


class NotLayer:
    @staticmethod
    def apply(x):
        return x


NotLayer.apply(3)
