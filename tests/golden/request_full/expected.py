import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer
from paddle.jit import to_static


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        grad = dy * (1 - ctx.func(y))
        return grad


class SimpleNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    @to_static
    def forward(self, x):
        y = self.linear(x)
        out = _p2s.apply(cus_tanh, y, func1=paddle.tanh)
        return paddle.mean(out)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(cus_tanh)
def _p2s_static_cus_tanh(x, func1, func2=_p2s.DEFAULT):
    """cus_tanh.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(cus_tanh, (x, func1, func2), {})
    return op.build(forward=cus_tanh.forward, backward=cus_tanh.backward)
# pylayer2static 0.1.0
