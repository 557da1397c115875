"""Backward returns None for an input that needs a gradient and for a stop_gradient input."""
import paddle
from paddle.autograd import PyLayer


class MulAdd(PyLayer):
    @staticmethod
    def forward(ctx, x, y, z):
        ctx.save_for_backward(x, y)
        return x * y + z

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensor()
        return dy * y, None, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, y, z):
        return MulAdd.apply(self.linear(x), y, z)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True), ([2, 3], "float32", False)]
