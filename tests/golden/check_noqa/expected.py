import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Debug(PyLayer):
    @staticmethod
    def forward(ctx, x):
        print(x.numpy())  # noqa: P2S201
        print(x.tolist())  # noqa
        print(x.sum().item())  # NOQA:P2S201, P2S203
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


out = _p2s.apply(Debug, paddle.ones([2]))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Debug)
def _p2s_static_Debug(x):
    """Debug.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Debug, (x,), {})
    return op.build(forward=Debug.forward, backward=Debug.backward)
# pylayer2static 0.1.0
