import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class CusTanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - ctx.func(y))


out = CusTanh.apply(paddle.ones([2]), func1=paddle.tanh, fucn2=paddle.square)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(CusTanh)
def _p2s_static_CusTanh(x, func1, func2=_p2s.DEFAULT):
    """CusTanh.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(CusTanh, (x, func1, func2), {})
    return op.build(forward=CusTanh.forward, backward=CusTanh.backward)
# pylayer2static 0.1.0
