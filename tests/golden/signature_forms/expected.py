import paddle; import pylayer2static_runtime as _p2s
import paddle.autograd as ag


class Many(ag.PyLayer):
    @staticmethod
    def forward(ctx, x, /, y: paddle.Tensor, *rest, scale=2.0, mode: str = "a", **extra):
        return x * scale

    @staticmethod
    def backward(ctx, g):
        return g


class KwOnly(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x, *, alpha):
        return x * alpha

    @staticmethod
    def backward(ctx, g):
        return g


class NoArgs(paddle.autograd.py_layer.PyLayer):
    @staticmethod
    def forward(ctx):
        return paddle.ones([1])

    @staticmethod
    def backward(ctx):
        return None


z = _p2s.apply(Many, paddle.ones([2]), paddle.ones([2]), 3, scale=1.0)
w = _p2s.apply(KwOnly, z, alpha=0.5)
n = _p2s.apply(NoArgs)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Many)
def _p2s_static_Many(x, /, y, *rest, scale=_p2s.DEFAULT, mode=_p2s.DEFAULT, **extra):
    """Many.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Many, (x, y, *rest), {'scale': scale, 'mode': mode, **extra})
    return op.build(forward=Many.forward, backward=Many.backward)


@_p2s.register(KwOnly)
def _p2s_static_KwOnly(x, *, alpha):
    """KwOnly.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(KwOnly, (x,), {'alpha': alpha})
    return op.build(forward=KwOnly.forward, backward=KwOnly.backward)


@_p2s.register(NoArgs)
def _p2s_static_NoArgs():
    """NoArgs.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(NoArgs, (), {})
    return op.build(forward=NoArgs.forward, backward=NoArgs.backward)
# pylayer2static 0.1.0
