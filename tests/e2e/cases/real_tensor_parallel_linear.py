"""Column- and row-parallel linear layers of a 2-way tensor-parallel group simulated on one
process: c_identity-style copy to every rank (identity forward, sum backward), c_concat
and c_split along the last axis, and an all-reduce (sum forward, identity backward), each
rank's tensors passed as a list output or as `*parts`.

Every simulated rank holds its own weight shard, so the layers equal a plain Linear whose
weight is the concatenation of the shards.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer

NRANKS = 2


class CopyToRanks(PyLayer):
    """The input replicated on every rank: identity forward, sum of the ranks' grads back."""

    @staticmethod
    def forward(ctx, x, nranks=NRANKS):
        ctx.nranks = nranks
        return [paddle.assign(x) for _ in range(nranks)]

    @staticmethod
    def backward(ctx, *grads):
        return paddle.add_n(list(grads))


class ConcatFromRanks(PyLayer):
    """c_concat: the ranks' output columns gathered along the last axis."""

    @staticmethod
    def forward(ctx, *parts, axis=-1):
        ctx.axis = axis
        ctx.widths = [p.shape[axis] for p in parts]
        return paddle.concat(list(parts), axis=axis)

    @staticmethod
    def backward(ctx, grad):
        return tuple(paddle.split(grad, ctx.widths, axis=ctx.axis))


class SplitToRanks(PyLayer):
    """c_split: each rank keeps its slice of the last axis."""

    @staticmethod
    def forward(ctx, x, nranks, axis=-1):
        ctx.axis = axis
        return paddle.split(x, nranks, axis=axis)

    @staticmethod
    def backward(ctx, *grads):
        return paddle.concat(list(grads), axis=ctx.axis)


class AllReduceFromRanks(PyLayer):
    """mp_allreduce: the sum of the ranks' partial outputs; each rank gets the full grad."""

    @staticmethod
    def forward(ctx, *partials):
        ctx.count = len(partials)
        return paddle.add_n(list(partials))

    @staticmethod
    def backward(ctx, grad):
        return tuple(paddle.assign(grad) for _ in range(ctx.count))


class ColumnParallelLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features, gather_output=True):
        super().__init__()
        # rank r's shard: columns [r * width, (r + 1) * width) of the full weight
        width = out_features // NRANKS
        self.shards = paddle.nn.LayerList([paddle.nn.Linear(in_features, width) for _ in range(NRANKS)])
        self.gather_output = gather_output

    def forward(self, x):
        copies = CopyToRanks.apply(x)
        outs = [shard(c) for shard, c in zip(self.shards, copies)]
        if self.gather_output:
            return ConcatFromRanks.apply(*outs, axis=-1)
        return outs


class RowParallelLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features, input_is_parallel=False):
        super().__init__()
        # rank r's shard: rows [r * rows, (r + 1) * rows) of the full weight
        rows = in_features // NRANKS
        self.shards = paddle.nn.LayerList(
            [paddle.nn.Linear(rows, out_features, bias_attr=False) for _ in range(NRANKS)])
        self.bias = self.create_parameter([out_features], is_bias=True)
        self.input_is_parallel = input_is_parallel

    def forward(self, x):
        parts = x if self.input_is_parallel else SplitToRanks.apply(x, NRANKS)
        partials = [shard(p) for shard, p in zip(self.shards, parts)]
        return AllReduceFromRanks.apply(*partials) + self.bias


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = ColumnParallelLinear(6, 8, gather_output=False)
        self.fc2 = RowParallelLinear(8, 6, input_is_parallel=True)
        self.fc3 = ColumnParallelLinear(6, 4, gather_output=True)
        self.fc4 = RowParallelLinear(4, 3)

    def forward(self, x):
        h = self.fc2([F.gelu(o) for o in self.fc1(x)])
        return self.fc4(paddle.tanh(self.fc3(h + x)))


INPUTS = [([3, 6], "float32", True)]
