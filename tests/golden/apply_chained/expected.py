from paddle.autograd import PyLayer; import pylayer2static_runtime as _p2s


class A(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, dy):
        return dy


r = _p2s.apply(_p2s.apply(A, x), y)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(A)
def _p2s_static_A(x):
    """A.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(A, (x,), {})
    return op.build(forward=A.forward, backward=A.backward)
# pylayer2static 0.1.0
