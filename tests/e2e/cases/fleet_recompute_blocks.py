"""Paddle's own recompute, as LLM code calls it: a pre-LN block through
`paddle.distributed.fleet.utils.recompute` (reentrant), one with `use_reentrant=False` and a
keyword argument that is a tensor (an attention bias) and one that is not (a scale), and a
Sequential of blocks as one recomputed function (a tuple of tensors as an argument:
tests/e2e/test_recompute.py). In a static graph each is the
runtime's recompute op (recompute.py): forward under no_grad, the block re-run in backward.
paddle 2.6.2's CPU eager refuses RNG preservation in the non-reentrant form, so it passes
`preserve_rng_state=False` (nothing here draws random numbers). (`recompute_sequential` with
two segments or more fails in paddle 3.3.1's eager mode: it unpacks a segment's output tensor
as the next segment's arguments, `*args` over its rows.)
"""
import paddle
from paddle.distributed.fleet.utils import recompute


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = paddle.nn.LayerNorm(8)
        self.up = paddle.nn.Linear(8, 16)
        self.down = paddle.nn.Linear(16, 8)

    def forward(self, x, bias=None, scale=1.0, rotary=None):
        if rotary is not None:
            cos, sin = rotary
            x = x * cos + sin
        h = self.up(self.norm(x))
        if bias is not None:
            h = h + bias
        return x + scale * self.down(paddle.nn.functional.gelu(h))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.first = Block()
        self.second = Block()
        self.tail = paddle.nn.Sequential(Block(), Block(), Block(), Block())
        self.bias = self.create_parameter([16])

    def forward(self, x):
        h = recompute(self.first, x)
        h = recompute(self.second, h, bias=self.bias, scale=0.5, use_reentrant=False, preserve_rng_state=False)
        h = recompute(self.tail, h)
        return h.mean(axis=-1)


INPUTS = [([2, 3, 8], "float32", True)]
# paddle 2.6.2's SOT runs recompute eagerly, and there the non-reentrant form fails in backward
# (IndexError in recompute.py's `inner_pack`, with or without pylayer2static).
MODES_2_6 = ("eager", "to_static", "static", "jit_save", "train")
