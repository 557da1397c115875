"""A module with PyLayers that also uses recompute and ScatterOp gets one runtime import; its
own PyLayer goes through the runtime, ScatterOp.apply stays as written."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer
from paddle.distributed.fleet.utils import recompute
from paddle.distributed.fleet.utils.sequence_parallel_utils import ScatterOp


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, dy):
        return dy * 2


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 4)

    def forward(self, x):
        y = recompute(self.linear, ScatterOp.apply(x))
        return _p2s.apply(Scale, y)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Scale)
def _p2s_static_Scale(x):
    """Scale.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Scale, (x,), {})
    return op.build(forward=Scale.forward, backward=Scale.backward)
# pylayer2static 0.1.0
