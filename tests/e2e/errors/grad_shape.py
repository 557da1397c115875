"""Backward returns a gradient of another shape than its input (eager stores it as the
gradient unchecked; a static graph would broadcast it): an error at graph build."""
import paddle
from paddle.autograd import PyLayer


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 3.0

    @staticmethod
    def backward(ctx, dy):
        return (dy * 3.0).sum(axis=0)


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Scale.apply(x)


INPUTS = [([2, 4], "float32", True)]
