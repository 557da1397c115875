import paddle
from paddle.autograd import PyLayer


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0, None


y = Scale.apply(paddle.ones([2]))
