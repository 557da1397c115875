import numpy as np
import paddle
from paddle.autograd import PyLayer


class NpTanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.to_tensor(np.tanh(x.numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - y * y)


out = NpTanh.apply(paddle.ones([2]))
