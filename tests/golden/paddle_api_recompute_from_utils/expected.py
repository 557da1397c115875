"""A model that only calls Paddle's recompute: the runtime import goes in (the runtime makes
recompute static), and nothing else changes."""
import paddle; import pylayer2static_runtime as _p2s
import paddle.nn as nn
from paddle.distributed.fleet.utils import recompute


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return paddle.tanh(self.linear(x))


class Model(nn.Layer):
    def __init__(self, use_recompute=True):
        super().__init__()
        self.blocks = nn.LayerList([Block() for _ in range(2)])
        self.use_recompute = use_recompute

    def forward(self, x):
        for block in self.blocks:
            if self.use_recompute and self.training:
                x = recompute(block, x, use_reentrant=True)
            else:
                x = block(x)
        return x.mean()
