"""A forward that scales its input in place (`hidden.scale_(...)`): eager changes the
caller's tensor too, which a static graph cannot; refused at the user's line."""
import paddle
from paddle.autograd import PyLayer


class ScaleInPlace(PyLayer):
    @staticmethod
    def forward(ctx, hidden, factor):
        ctx.factor = factor
        hidden.scale_(factor)
        return hidden * 1.0

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x):
        return ScaleInPlace.apply(self.fc(x), 0.5)


INPUTS = [([2, 4], "float32", True)]
