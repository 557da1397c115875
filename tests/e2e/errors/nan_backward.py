"""A NaN in backward (the square root of negative numbers) under `FLAGS_check_nan_inf`.

The run stops at the NaN, and the error must name this file's line in backward and the class."""
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
FLAGS = {"FLAGS_check_nan_inf": True}  # stop the run at the first NaN or Inf an op makes
