import paddle
from paddle.autograd import PyLayer
from paddle.jit import to_static


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


class SimpleNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    @to_static
    def forward(self, x):
        y = self.linear(x)
        out = cus_tanh.apply(y)
        return paddle.mean(out)
