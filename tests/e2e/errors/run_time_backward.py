"""A shape mismatch in backward that only the run sees ([2, 4] against `masked_select`'s [8]).

The error must name this file's line in backward and the class."""
import paddle
from paddle.autograd import PyLayer


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 3.0

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        kept = paddle.masked_select(x, x == x)
        return dy * kept  # the shape mismatch


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Scale.apply(x)


INPUTS = [([2, 4], "float32", True)]
