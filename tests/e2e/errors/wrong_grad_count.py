"""Backward returns two gradients for forward's one tensor input (PyLayer rule 5)."""
import paddle
from paddle.autograd import PyLayer


class Twice(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0, dy


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Twice.apply(x)


INPUTS = [([2, 4], "float32", True)]
