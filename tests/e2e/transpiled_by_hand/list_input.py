"""Tensors inside a list argument are op inputs (eager 3.x passes their gradients as a list)."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Combine(PyLayer):
    @staticmethod
    def forward(ctx, xs, k=2.0):
        a, b = xs
        ctx.k = k
        return a * k + b

    @staticmethod
    def backward(ctx, dy):
        return [dy * ctx.k, dy]


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, y):
        return _p2s.apply(Combine, [self.linear(x), y], k=3.0)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True)]

# paddle 2.6.2's eager PyLayer mishandles tensors inside list arguments (the gradient
# of the list's first tensor goes to its last leaf tensor; non-leaf ones get none), so
# there is no eager reference for gradients: on 2.6 only the exported forward is compared.
MODES_2_6 = ("jit_save",)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(Combine)
def _p2s_static_Combine(xs, k=_p2s.DEFAULT):
    """Combine.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Combine, (xs, k), {})
    return op.build(forward=Combine.forward, backward=Combine.backward)
# pylayer2static 0.1.0
