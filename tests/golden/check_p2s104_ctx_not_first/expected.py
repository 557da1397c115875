import paddle
from paddle.autograd import PyLayer


class Ones(PyLayer):
    @staticmethod
    def forward(*, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0
