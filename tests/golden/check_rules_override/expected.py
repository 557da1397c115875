import paddle
from paddle.autograd import PyLayer


class Debug(PyLayer):
    @staticmethod
    def forward(ctx, x):
        print(x.numpy())
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


out = Debug.apply(paddle.ones([2]))
