"""Backward returns a gradient for a tensor that stops gradient; eager raises when backward
runs ("should return None ... because its forward Tensor's stopgradient is true")."""
import paddle
from paddle.autograd import PyLayer


class Mul(PyLayer):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensor()
        return dy * w, dy * x


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([2, 4])
        self.w.stop_gradient = True

    def forward(self, x):
        return Mul.apply(x, self.w)


INPUTS = [([2, 4], "float32", True)]
