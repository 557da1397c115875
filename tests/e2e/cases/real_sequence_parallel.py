"""Sequence parallel in the PaddleNLP style: ScatterOp, GatherOp, AllGatherOp and
ReduceScatterOp along the sequence axis (axis 0 of [s, b, h]) around a column and a row
sequence-parallel linear; the collectives are split/concat at model-parallel world size 1.

With one rank, scatter keeps the rank's slice of `paddle.split`, all-gather concatenates
every rank's piece and reduce-scatter sums the ranks' partial results before slicing, which
is what these layers compute when the model-parallel group holds only this process.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class _ModelParallelGroup:
    """The model-parallel group of a single-process run: one rank, rank 0."""

    nranks = 1
    rank = 0


_MP_GROUP = _ModelParallelGroup()


def get_model_parallel_group():
    return _MP_GROUP


def scatter(input, group=None):
    """This rank's slice of `input` along the sequence axis."""
    group = get_model_parallel_group() if group is None else group
    seq_len = input.shape[0]
    assert seq_len % group.nranks == 0, "sequence length must divide the model-parallel degree"
    return paddle.split(input, group.nranks, axis=0)[group.rank]


def all_gather(input, group=None):
    """Every rank's slice, concatenated along the sequence axis (one rank: its own)."""
    group = get_model_parallel_group() if group is None else group
    pieces = [input for _ in range(group.nranks)]
    return paddle.concat(pieces, axis=0)


def reduce_scatter(input, group=None):
    """The sum over ranks of `input`, sliced along the sequence axis."""
    group = get_model_parallel_group() if group is None else group
    partials = [input for _ in range(group.nranks)]
    total = paddle.add_n(partials) if len(partials) > 1 else partials[0]
    return paddle.split(total, group.nranks, axis=0)[group.rank]


class ScatterOp(PyLayer):
    # input: [s, b, h], output: [s/n, b, h]
    @staticmethod
    def forward(ctx, input, group=None):
        ctx.group = group
        return scatter(input, group=group)

    @staticmethod
    def backward(ctx, grad):
        return all_gather(grad, group=ctx.group)


class GatherOp(PyLayer):
    # input: [s/n, b, h], output: [s, b, h]
    @staticmethod
    def forward(ctx, input, group=None):
        ctx.group = group
        return all_gather(input, group=group)

    @staticmethod
    def backward(ctx, grad):
        return scatter(grad, group=ctx.group)


class AllGatherOp(PyLayer):
    # input: [s/n, b, h], output: [s, b, h]; backward reduce-scatters
    @staticmethod
    def forward(ctx, input, group=None):
        ctx.group = group
        return all_gather(input, group=group)

    @staticmethod
    def backward(ctx, grad):
        return reduce_scatter(grad, group=ctx.group)


class ReduceScatterOp(PyLayer):
    # input: [s, b, h] partial sums, output: [s/n, b, h]; backward all-gathers
    @staticmethod
    def forward(ctx, input, group=None):
        ctx.group = group
        return reduce_scatter(input, group=group)

    @staticmethod
    def backward(ctx, grad):
        return all_gather(grad, group=ctx.group)


class ColumnSequenceParallelLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = self.create_parameter([in_features, out_features])
        self.bias = self.create_parameter([out_features], is_bias=True)

    def forward(self, x):
        full = AllGatherOp.apply(x)
        return F.linear(full, self.weight, self.bias)


class RowSequenceParallelLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = self.create_parameter([in_features, out_features])
        self.bias = self.create_parameter([out_features], is_bias=True)

    def forward(self, x):
        partial = paddle.matmul(x, self.weight)
        out = ReduceScatterOp.apply(partial)
        return out + self.bias


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = paddle.nn.LayerNorm(8)
        self.up = ColumnSequenceParallelLinear(8, 16)
        self.down = RowSequenceParallelLinear(16, 8)

    def forward(self, hidden):
        # [b, s, h] -> [s, b, h]: sequence parallelism splits the sequence axis
        hidden = paddle.transpose(hidden, [1, 0, 2])
        shard = ScatterOp.apply(hidden)
        residual = shard
        shard = self.down(F.gelu(self.up(self.norm(shard))))
        shard = shard + residual
        out = GatherOp.apply(shard, group=get_model_parallel_group())
        return paddle.transpose(out, [1, 0, 2])


INPUTS = [([2, 4, 8], "float32", True)]
