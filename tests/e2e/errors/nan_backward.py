"""Backward takes the square root of negative numbers: with `FLAGS_check_nan_inf` the run
stops at the NaN, and the error must name this file's line in backward and the class."""
import paddle
from paddle.autograd import PyLayer


class Root(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 3.0

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * paddle.sqrt(x - 100.0)  # the NaN


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Root.apply(x)


INPUTS = [([2, 4], "float32", True)]
