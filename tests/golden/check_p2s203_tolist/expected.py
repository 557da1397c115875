import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Pick(PyLayer):
    @staticmethod
    def forward(ctx, x, index):
        ctx.rows = index.tolist()
        return paddle.gather(x, index)

    @staticmethod
    def backward(ctx, dy):
        return dy, None


out = _p2s.apply(Pick, paddle.ones([4, 2]), paddle.to_tensor([0, 2]))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Pick)
def _p2s_static_Pick(x, index):
    """Pick.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Pick, (x, index), {})
    return op.build(forward=Pick.forward, backward=Pick.backward)
# pylayer2static 0.1.0
