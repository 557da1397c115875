"""A sublayer that applies a PyLayer, run under paddle.distributed.fleet.utils.recompute: in a
static graph the runtime's recompute op (recompute.py), which re-runs the block in backward
and differentiates through the inner PyLayer's own op (its saved tensor piped from the re-run)."""
import paddle
from paddle.autograd import PyLayer
from paddle.distributed.fleet.utils import recompute


class Swish(PyLayer):
    @staticmethod
    def forward(ctx, x):
        s = paddle.nn.functional.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensor()
        return dy * (s + x * s * (1.0 - s))


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return Swish.apply(self.linear(x))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return recompute(self.block, x) * 2.0


INPUTS = [([2, 4], "float32", True)]
