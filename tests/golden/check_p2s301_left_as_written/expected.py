import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Broken(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy, dz):
        return dy * 2.0


class Derived(Broken):
    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x, alpha=2.0):
        return x * alpha

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


x = paddle.ones([2])
a = Broken.apply(x)
b = Derived.apply(x)
c = _p2s.apply(Scale, x)
d = Scale.apply(x, beta=3.0)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Scale)
def _p2s_static_Scale(x, alpha=_p2s.DEFAULT):
    """Scale.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Scale, (x, alpha), {})
    return op.build(forward=Scale.forward, backward=Scale.backward)
# pylayer2static 0.1.0
