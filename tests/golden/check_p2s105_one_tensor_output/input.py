import paddle
from paddle.autograd import PyLayer


class CusTanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy, dz):
        y, = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


class Twice(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2.0


class Repeat(PyLayer):
    """Not flagged: `x * 2` repeats a list x, which makes as many outputs as it has items."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2


y = CusTanh.apply(paddle.ones([2]))
z = Twice.apply(paddle.ones([2]))
w = Repeat.apply(paddle.ones([2]))
