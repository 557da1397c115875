import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Real(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


def uses_parameter(Real):
    return _p2s.apply(Real, 1)


def uses_local():
    Real = make_other()
    return _p2s.apply(Real, 2)


def uses_module():
    return _p2s.apply(Real, paddle.ones([1]))


class NotLayer:
    @staticmethod
    def apply(x):
        return x


NotLayer.apply(3)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Real)
def _p2s_static_Real(x):
    """Real.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Real, (x,), {})
    return op.build(forward=Real.forward, backward=Real.backward)
# pylayer2static 0.1.0
