import paddle
from paddle.autograd import PyLayer


class CusTanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - ctx.func(y))


out = CusTanh.apply(paddle.ones([2]), paddle.tanh, paddle.square, paddle.exp)
