import pylayer2static_runtime as _p2s
try:
    import paddle
    from paddle.autograd import PyLayer
except ImportError:
    raise


class Only(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


_p2s.apply(Only, paddle.ones([1]))


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Only)
def _p2s_static_Only(x):
    """Only.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Only, (x,), {})
    return op.build(forward=Only.forward, backward=Only.backward)
# pylayer2static 0.1.0
