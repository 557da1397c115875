import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Clip(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.max().item() > 1.0:
            return paddle.clip(x, max=1.0)
        return x * 1.0

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * paddle.cast(x <= 1.0, dy.dtype)


out = _p2s.apply(Clip, paddle.ones([2]))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Clip)
def _p2s_static_Clip(x):
    """Clip.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Clip, (x,), {})
    return op.build(forward=Clip.forward, backward=Clip.backward)
# pylayer2static 0.1.0
