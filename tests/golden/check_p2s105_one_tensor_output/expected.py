import paddle; import pylayer2static_runtime as _p2s
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
w = _p2s.apply(Repeat, paddle.ones([2]))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Repeat)
def _p2s_static_Repeat(x):
    """Repeat.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Repeat, (x,), {})
    return op.build(forward=Repeat.forward, backward=Repeat.backward)
# pylayer2static 0.1.0
