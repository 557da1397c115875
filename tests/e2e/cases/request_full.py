"""The request's example: non-tensor arguments (a function, a default function)."""
import paddle
from paddle.autograd import PyLayer


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        grad = dy * (1 - ctx.func(y))
        return grad


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        y = self.linear(x)
        out = cus_tanh.apply(y, func1=paddle.tanh)
        return paddle.mean(out)


INPUTS = [([2, 4], "float32", True)]
STEPS = 10
