"""A module with PyLayers that also uses recompute and ScatterOp gets one runtime import; its
own PyLayer goes through the runtime, ScatterOp.apply stays as written."""
import paddle
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
        return Scale.apply(y)
