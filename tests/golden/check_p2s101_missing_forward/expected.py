import paddle
from paddle.autograd import PyLayer


class Scale(PyLayer):
    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


y = Scale.apply(paddle.ones([2]))
