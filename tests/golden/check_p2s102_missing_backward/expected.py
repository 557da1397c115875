import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0


y = _p2s.apply(Scale, paddle.ones([2]))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Scale)
def _p2s_static_Scale(x):
    """Scale.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Scale, (x,), {})
    return op.build(forward=Scale.forward, backward=Scale.backward)
# pylayer2static 0.1.0
