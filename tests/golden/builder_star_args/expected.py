import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Spread(PyLayer):
    @staticmethod
    def forward(ctx, *xs):
        return tuple(x * 2 for x in xs)

    @staticmethod
    def backward(ctx, *grads):
        return tuple(g * 2 for g in grads)


class Keywords(PyLayer):
    @staticmethod
    def forward(ctx, **named):
        return named["x"] * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


a, b = _p2s.apply(Spread, paddle.ones([1]), paddle.ones([1]))
c = _p2s.apply(Keywords, x=paddle.ones([1]))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Spread)
def _p2s_static_Spread(*xs):
    """Spread.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Spread, (*xs,), {})
    return op.build(forward=Spread.forward, backward=Spread.backward)


@_p2s.register(Keywords)
def _p2s_static_Keywords(**named):
    """Keywords.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Keywords, (), {**named})
    return op.build(forward=Keywords.forward, backward=Keywords.backward)
# pylayer2static 0.1.0
