"""Sequence parallel with every rank of a 2-way group simulated on one process: scatter
returns a list of sequence shards, all-gather and reduce-scatter take `*shards` (reduce-scatter
with a keyword-only `nranks`) and return a tensor or a list; gradients are those of
split/concat along axis 0.

Each simulated rank holds its own column shard of the up projection and row shard of the
down projection (Megatron-style tensor + sequence parallel MLP), so the whole model equals
an ordinary MLP on the gathered sequence.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer

NRANKS = 2


class ScatterToRanks(PyLayer):
    """[s, b, h] -> list of nranks shards [s/n, b, h]; backward all-gathers."""

    @staticmethod
    def forward(ctx, input, nranks):
        ctx.nranks = nranks
        return paddle.split(input, nranks, axis=0)

    @staticmethod
    def backward(ctx, *grads):
        assert len(grads) == ctx.nranks
        return paddle.concat(list(grads), axis=0)


class AllGatherFromRanks(PyLayer):
    """shards of every rank -> the full sequence (what each rank receives)."""

    @staticmethod
    def forward(ctx, *shards):
        ctx.sizes = [shard.shape[0] for shard in shards]
        return paddle.concat(list(shards), axis=0)

    @staticmethod
    def backward(ctx, grad):
        # the reduce-scatter of the gathered gradient: each rank gets its slice back
        return tuple(paddle.split(grad, ctx.sizes, axis=0))


class ReduceScatterToRanks(PyLayer):
    """partial [s, b, h] of every rank -> list of shards of their sum; backward all-gathers."""

    @staticmethod
    def forward(ctx, *partials, nranks):
        ctx.count = len(partials)
        total = paddle.add_n(list(partials))
        return paddle.split(total, nranks, axis=0)

    @staticmethod
    def backward(ctx, *grads):
        full = paddle.concat(list(grads), axis=0)
        return tuple(full for _ in range(ctx.count))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = paddle.nn.LayerNorm(8)
        # rank r holds columns [8r, 8r+8) of the up projection, rows of the down one
        self.up = paddle.nn.LayerList([paddle.nn.Linear(8, 8) for _ in range(NRANKS)])
        self.down = paddle.nn.LayerList([paddle.nn.Linear(8, 8, bias_attr=False) for _ in range(NRANKS)])
        self.down_bias = self.create_parameter([8], is_bias=True)

    def forward(self, hidden):
        hidden = paddle.transpose(hidden, [1, 0, 2])  # [s, b, h]
        shards = ScatterToRanks.apply(hidden, NRANKS)
        normed = [self.norm(shard) for shard in shards]
        full = AllGatherFromRanks.apply(*normed)
        partials = [self.down[r](F.gelu(self.up[r](full))) for r in range(NRANKS)]
        out_shards = ReduceScatterToRanks.apply(*partials, nranks=NRANKS)
        out_shards = [o + self.down_bias + s for o, s in zip(out_shards, shards)]
        out = AllGatherFromRanks.apply(*out_shards)
        return paddle.transpose(out, [1, 0, 2])


INPUTS = [([2, 4, 8], "float32", True)]
