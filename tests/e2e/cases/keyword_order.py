"""Keywords in another order than the signature, keyword-only parameters (with and without
defaults), a positional-only parameter, and defaults left out or overridden."""
import paddle
from paddle.autograd import PyLayer


class Affine(PyLayer):
    @staticmethod
    def forward(ctx, x, /, w, b, *, scale, shift=0.0, power=1):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        ctx.power = power
        y = x * w
        if power == 2:
            y = y * y
        return y * scale + b + shift

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensor()
        g = dy * ctx.scale
        if ctx.power == 2:
            g = g * 2.0 * x * w
        return g * w, g * x, dy


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, w, b):
        h = self.linear(x)
        first = Affine.apply(h, b=b, scale=2.0, w=w)
        second = Affine.apply(h, power=2, shift=0.5, scale=-1.0, b=b * 2.0, w=w)
        return first, second


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True), ([2, 3], "float32", True)]
