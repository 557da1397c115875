"""Tensor-dependent if in forward and while in backward, through a user helper function."""
import paddle
from paddle.autograd import PyLayer


def pick(x):
    if paddle.mean(x) > 0:
        y = x * 2.0
    else:
        y = x * -1.0
    return y


class Piecewise(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return pick(x)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        factor = paddle.full([1], 1.0)
        i = paddle.full([1], 0.0)
        while i < 3:
            factor = factor * 1.5
            i = i + 1.0
        if paddle.mean(x) > 0:
            g = dy * 2.0 * factor
        else:
            g = dy * -1.0 * factor
        return g


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        return Piecewise.apply(h), Piecewise.apply(h - 10.0) * 3.0


INPUTS = [([2, 4], "float32", True)]
