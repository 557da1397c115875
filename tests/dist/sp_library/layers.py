"""A library's sequence-parallel layer: Paddle's ScatterOp, imported from paddle, applied as written."""
import paddle
from paddle.distributed.fleet.utils.sequence_parallel_utils import ScatterOp


class ScatteredLinear(paddle.nn.Layer):
    """This rank's slice of the sequence axis of a [s, b, h] activation, then a linear."""

    def __init__(self, hidden):
        super().__init__()
        self.linear = paddle.nn.Linear(hidden, hidden)

    def forward(self, hidden):
        return self.linear(ScatterOp.apply(hidden))
