import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(s)
        return x * float(s)

    @staticmethod
    def backward(ctx, dy):
        s, = ctx.saved_tensor()
        steps = int(dy[0])
        return dy * float(s) * steps, None


out = _p2s.apply(Scale, paddle.ones([2]), paddle.to_tensor(3.0))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Scale)
def _p2s_static_Scale(x, s):
    """Scale.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Scale, (x, s), {})
    return op.build(forward=Scale.forward, backward=Scale.backward)
# pylayer2static 0.1.0
