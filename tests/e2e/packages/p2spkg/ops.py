import paddle
from paddle.autograd import PyLayer


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x, factor=2.0):
        ctx.factor = factor
        y = paddle.tanh(x) * factor
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (ctx.factor - paddle.square(y) / ctx.factor)
