import paddle
from paddle.autograd import PyLayer


class Act(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


y = Act.apply(paddle.ones([1]))