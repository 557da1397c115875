"""A PyLayer called inside another PyLayer's forward and backward; classes nested in a class."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Square(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 2.0 * x


class Ops:
    class Poly(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return _p2s.apply(Square, x) + x

        @staticmethod
        def backward(ctx, dy):
            x, = ctx.saved_tensor()
            return dy * (_p2s.apply(Square, x) * 0.0 + 2.0 * x + 1.0)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return _p2s.apply(Ops.Poly, self.linear(x))


INPUTS = [([2, 4], "float32", True)]


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(Square)
def _p2s_static_Square(x):
    """Square.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Square, (x,), {})
    return op.build(forward=Square.forward, backward=Square.backward)


@_p2s.register(Ops.Poly)
def _p2s_static_Ops_Poly(x):
    """Ops.Poly.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Ops.Poly, (x,), {})
    return op.build(forward=Ops.Poly.forward, backward=Ops.Poly.backward)
# pylayer2static 0.1.0
