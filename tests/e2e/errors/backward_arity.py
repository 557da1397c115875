"""backward takes two output gradients, forward returns one tensor through a helper the
checker cannot see through (issue 11 item 6, broken on purpose)."""
import paddle
from paddle.autograd import PyLayer


def double(x):
    return x * 2.0


class Twice(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return double(x)

    @staticmethod
    def backward(ctx, dy, dz):
        return dy * 2.0


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Twice.apply(x)


INPUTS = [([2, 4], "float32", True)]
