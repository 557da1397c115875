"""A PyLayer whose forward raises: the traceback must point at the raising line."""
import paddle
from paddle.autograd import PyLayer


def check_positive(x):
    raise ValueError("user error in forward")  # the line the traceback must name


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x):
        check_positive(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Scale.apply(x)


INPUTS = [([2, 4], "float32", True)]
