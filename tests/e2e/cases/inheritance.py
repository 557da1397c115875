"""A user base PyLayer with shared helpers; one subclass overrides forward (backward
inherited), one overrides backward (forward inherited), one overrides both and calls the
base's through super-less explicit calls; a subclass of a subclass."""
import paddle
from paddle.autograd import PyLayer


class ScaledBase(PyLayer):
    factor = 2.0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 2.0 + x * 0.0


class SquareForward(ScaledBase):
    """forward overridden; the inherited backward is wrong on purpose for this forward's
    math, as eager runs it: the static graph must run the same (inherited) backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x


class HalfBackward(ScaledBase):
    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 0.5 + x


class Both(ScaledBase):
    @staticmethod
    def forward(ctx, x):
        y = ScaledBase.forward(ctx, x)
        return y + 1.0

    @staticmethod
    def backward(ctx, dy):
        return ScaledBase.backward(ctx, dy) * 3.0


class Deeper(Both):
    pass


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        return (SquareForward.apply(h), HalfBackward.apply(h), Both.apply(h),
                Deeper.apply(h) * 2.0)


INPUTS = [([2, 4], "float32", True)]
