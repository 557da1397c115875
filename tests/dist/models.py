"""Model-parallel PyLayers and small models trained under `paddle.distributed.launch`.

The PyLayers follow the communication layers of public Paddle model libraries (PaddleNLP's
sequence-parallel utilities, PaddleFleet's `mp_ops`): identity forward / all-reduce backward
(`c_identity`), all-reduce forward / identity backward (`mp_allreduce`), and along the
sequence axis (dim 0 of a `[s, b, h]` activation) scatter, gather, all-gather and
reduce-scatter; an all-to-all for expert parallelism; a synchronized batch norm for data
parallelism. Their bodies call the public `paddle.distributed` API, list forms included
(`dist.all_gather(parts, x)`), as user code does.

On the CPU (gloo) backend ProcessGroupGloo implements neither reduce_scatter nor all_to_all
(both versions: `process_group.h` raises Unimplemented), and the static `reduce_scatter` and
`all_to_all` ops have no CPU kernel, so here reduce-scatter is an all-reduce that keeps this
rank's slice and all-to-all is an all-gather that keeps the chunks addressed to this rank.
The arithmetic is the same; only the bytes on the wire differ.

The tensor-, sequence- and expert-parallel layers pass their group along (a non-tensor
argument kept on ctx, as fleet's layers do): on paddle 3.x fleet's model-parallel group of the
hybrid topology (mp_degree 2), on 2.6.2 the global group (see `model_parallel_group`). The
data-parallel model uses the global group.

`PaddleSequenceParallelMLP` applies Paddle's OWN sequence-parallel PyLayers
(`paddle.distributed.fleet.utils.sequence_parallel_utils`: ScatterOp, AllGatherOp,
ReduceScatterOp, GatherOp), which read fleet's hybrid topology themselves, so every rank sets it
up (`init_distributed`, mp_degree 2, on 2.6.2 too). For them, on CPU only and in these tests
only (`route_reduce_scatter`): Paddle's eager helper `sequence_parallel_utils.reduce_scatter`
(gloo has no reduce_scatter) and the static reduce-scatter the runtime's twins build (no CPU
kernel: `paddle._C_ops.reduce_scatter` in PIR programs, `dist.stream.reduce_scatter`'s static
form in the legacy IR) become an all-reduce in the model-parallel group and this rank's slice.
Their eager all-gather (`group.process_group.all_gather`) runs on gloo as it is.
"""
import os

import numpy as np
import paddle
import paddle.distributed as dist
import paddle.nn.functional as F
from paddle.autograd import PyLayer
from paddle.distributed import fleet
from paddle.distributed.fleet.utils import sequence_parallel_utils
from paddle.distributed.fleet.utils.sequence_parallel_utils import AllGatherOp as PaddleAllGatherOp
from paddle.distributed.fleet.utils.sequence_parallel_utils import GatherOp as PaddleGatherOp
from paddle.distributed.fleet.utils.sequence_parallel_utils import ReduceScatterOp as PaddleReduceScatterOp
from paddle.distributed.fleet.utils.sequence_parallel_utils import ScatterOp as PaddleScatterOp

SEQ, BATCH, HIDDEN, FFN = 4, 2, 8, 16


def init_distributed():
    """The ranks, and fleet's hybrid topology with every rank in the model-parallel group.

    paddle 2.x: `fleet.init` (which makes eager mode's ProcessGroupGloo), then the gloo context
    of static-graph collective ops, which 2.6.2's `init_parallel_env` does not make: it returns
    right after the process group (python/paddle/distributed/parallel.py, the
    `in_dynamic_mode()` branch), before the steps that initialize the context the CPU kernels
    of `c_allreduce_sum` / `c_allgather` use ("You must initialize the gloo environment
    first"). 3.x static programs use the process groups themselves. Then the CPU routing of
    reduce-scatter (`route_reduce_scatter`)."""
    fleet.init(is_collective=True, strategy=model_parallel_strategy(int(os.environ["PADDLE_TRAINERS_NUM"])))
    if paddle.__version__.startswith("2."):
        endpoint = os.environ["PADDLE_TRAINER_ENDPOINTS"].split(",")[0]
        dist.gloo_init_parallel_env(dist.get_rank(), dist.get_world_size(), endpoint)
    route_reduce_scatter()


def model_parallel_strategy(mp_degree):
    """fleet's strategy of a hybrid topology of `mp_degree`-way model parallelism alone."""
    strategy = fleet.DistributedStrategy()
    degrees = {"dp_degree": 1, "mp_degree": mp_degree, "pp_degree": 1}
    if paddle.__version__.startswith("2."):
        _protobuf_7_strategy_reads()
        for key, value in degrees.items():  # the setter reads `FieldDescriptor.label` too
            setattr(strategy.strategy.hybrid_configs, key, value)
    else:
        strategy.hybrid_configs = degrees
    return strategy


def _protobuf_7_strategy_reads():
    """paddle 2.6.2's `DistributedStrategy` reads its configs with `FieldDescriptor.label`
    (fleet/base/distributed_strategy.py `get_msg_dict`), which protobuf 7 (the 2.6 venv has
    7.36.2; paddle 2.6.2 pins only protobuf>=3.20.2) no longer has: `strategy.hybrid_configs`
    raises AttributeError and `fleet.init` cannot read its degrees. The same reader, asking
    `is_repeated`; the tests only."""
    from paddle.distributed.fleet.base import distributed_strategy

    def get_msg_dict(msg):
        fields = {}
        for field in msg.DESCRIPTOR.fields:
            value = getattr(msg, field.name)
            if field.is_repeated:
                value = (distributed_strategy.get_repeated_msg_dict(value) if field.type == field.TYPE_MESSAGE
                         else list(value))
            fields[field.name] = value
        return fields

    distributed_strategy.get_msg_dict = get_msg_dict


def route_reduce_scatter():
    """CPU only, these tests only: the reduce-scatters Paddle's sequence-parallel PyLayers make
    (eagerly, and the static op the runtime builds for them) as an all-reduce in fleet's
    model-parallel group and this rank's slice along axis 0: gloo's ProcessGroup has no
    reduce_scatter ("ProcessGroupGLOO does not support reduce_scatter", process_group.h) and
    the static op no CPU kernel ("Unimplemented cpu kernel for CReduceScatterOp"). The same
    sums; all-reduce moves twice the bytes."""
    from paddle.distributed.communication import stream

    group = fleet.get_hybrid_communicate_group().get_model_parallel_group()

    def eager(input):  # sequence_parallel_utils.reduce_scatter(input)
        return paddle.split(_all_reduce(input, group), group.nranks, axis=0)[group.rank]

    def pir(x, ring_id, nranks):  # paddle._C_ops.reduce_scatter, in a PIR program (paddle 3.x)
        assert ring_id == group.id and nranks == group.nranks, (ring_id, nranks)
        return paddle.split(_all_reduce(x, group), nranks, axis=0)[group.rank]

    def legacy(tensor, tensor_or_tensor_list, op=dist.ReduceOp.SUM, group=None, sync_op=True,
               use_calc_stream=False):  # dist.stream.reduce_scatter's static form (legacy IR, no group)
        nranks, rank = _ranks(group)
        paddle.assign(paddle.split(_all_reduce(tensor_or_tensor_list, group), nranks, axis=0)[rank], output=tensor)

    sequence_parallel_utils.reduce_scatter = eager
    paddle._C_ops.reduce_scatter = pir
    stream.reduce_scatter = legacy


def model_parallel_group():
    """The group of the tensor-, sequence- and expert-parallel layers. paddle 2.6.2's static
    collectives take no group ("Group can not be used in static graph mode for now"; its CPU
    kernels use the one gloo context), so there it is the global group (None), which holds the
    same ranks; pylayer2static's runtime lets 3.x static programs take the group."""
    if paddle.__version__.startswith("2."):
        return None
    return fleet.get_hybrid_communicate_group().get_model_parallel_group()


def _ranks(group):
    """(nranks, rank) in `group`, the global group when None, read as fleet's layers read them:
    `dist.get_world_size(group)` and `dist.get_rank(group)` refuse a group outside eager mode
    ("Only support group argument in eager mode", paddle/distributed/parallel.py)."""
    if group is None:
        return dist.get_world_size(), dist.get_rank()
    return group.nranks, group.rank


def _split_seq(x, group):
    """This rank's slice of the sequence axis."""
    nranks, rank = _ranks(group)
    return paddle.split(x, nranks, axis=0)[rank]


def _all_gather_seq(x, group):
    parts = []
    dist.all_gather(parts, x, group=group)
    return paddle.concat(parts, axis=0)


def _all_reduce(x, group=None):
    total = paddle.assign(x)  # all_reduce writes its argument: never a PyLayer's input
    dist.all_reduce(total, group=group)
    return total


def _reduce_scatter_seq(x, group):
    return _split_seq(_all_reduce(x, group), group)


def _all_to_all(x, group):
    """Chunk j of `x` (split along dim 0) goes to rank j; chunk k of the result came from rank k."""
    parts = []
    dist.all_gather(parts, x, group=group)
    nranks, rank = _ranks(group)
    return paddle.concat([paddle.split(part, nranks, axis=0)[rank] for part in parts], axis=0)


class ScatterOp(PyLayer):
    """Full sequence -> this rank's slice; backward all-gathers the slices' gradients."""

    @staticmethod
    def forward(ctx, input, group=None):
        ctx.group = group
        return _split_seq(input, group)

    @staticmethod
    def backward(ctx, grad):
        return _all_gather_seq(grad, ctx.group)


class GatherOp(PyLayer):
    """Slices -> the full sequence on every rank; backward keeps this rank's slice."""

    @staticmethod
    def forward(ctx, input, group=None):
        ctx.group = group
        return _all_gather_seq(input, group)

    @staticmethod
    def backward(ctx, grad):
        return _split_seq(grad, ctx.group)


class AllGatherOp(PyLayer):
    """Sequence-parallel all-gather before a column-parallel linear; backward reduce-scatters
    (every rank's partial gradient of the full sequence, summed, sliced)."""

    @staticmethod
    def forward(ctx, input, group=None):
        ctx.group = group
        return _all_gather_seq(input, group)

    @staticmethod
    def backward(ctx, grad):
        return _reduce_scatter_seq(grad, ctx.group)


class ReduceScatterOp(PyLayer):
    """Partial sums of a row-parallel linear -> this rank's slice of their sum; backward all-gathers."""

    @staticmethod
    def forward(ctx, input, group=None):
        ctx.group = group
        return _reduce_scatter_seq(input, group)

    @staticmethod
    def backward(ctx, grad):
        return _all_gather_seq(grad, ctx.group)


class CIdentity(PyLayer):
    """`c_identity`: the input of a column-parallel linear; backward sums the ranks' gradients."""

    @staticmethod
    def forward(ctx, tensor, group=None):
        ctx.group = group
        return paddle.assign(tensor)

    @staticmethod
    def backward(ctx, dy):
        return _all_reduce(dy, ctx.group)


class MPAllReduce(PyLayer):
    """`mp_allreduce`: the output of a row-parallel linear summed over ranks; backward is the identity."""

    @staticmethod
    def forward(ctx, tensor, group=None, op="sum"):
        assert op == "sum", op
        return _all_reduce(tensor, group)

    @staticmethod
    def backward(ctx, dy):
        return paddle.assign(dy)


class AllToAll(PyLayer):
    """Expert-parallel dispatch/combine: its own adjoint, so backward is the same exchange."""

    @staticmethod
    def forward(ctx, x, group=None):
        ctx.group = group
        return _all_to_all(x, group)

    @staticmethod
    def backward(ctx, dy):
        return _all_to_all(dy, ctx.group)


class SyncBatchNorm(PyLayer):
    """Batch norm over the batches of every rank: the sums of forward and of backward are
    all-reduced. Inputs x [n, c], weight and bias [c]."""

    @staticmethod
    def forward(ctx, x, weight, bias, epsilon=1e-5):
        channels = x.shape[1]
        local = paddle.concat([paddle.sum(x, axis=0), paddle.sum(x * x, axis=0),
                               paddle.full([1], x.shape[0], x.dtype)])
        stats = _all_reduce(local)
        count = stats[2 * channels:]
        mean = stats[:channels] / count
        var = stats[channels:2 * channels] / count - mean * mean
        inv_std = paddle.rsqrt(var + epsilon)
        xhat = (x - mean) * inv_std
        ctx.save_for_backward(xhat, inv_std, weight, count)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, dy):
        xhat, inv_std, weight, count = ctx.saved_tensor()
        g = dy * weight
        sums = _all_reduce(paddle.concat([paddle.sum(g, axis=0), paddle.sum(g * xhat, axis=0)]))
        channels = xhat.shape[1]
        dx = inv_std * (g - sums[:channels] / count - xhat * (sums[channels:] / count))
        return dx, paddle.sum(dy * xhat, axis=0), paddle.sum(dy, axis=0)


def _shard(full, axis):
    """This rank's shard of a replicated numpy array along `axis`."""
    return np.split(full, dist.get_world_size(), axis=axis)[dist.get_rank()]


def _parameter(layer, array, is_bias=False):
    return layer.create_parameter(list(array.shape), is_bias=is_bias,
                                  default_initializer=paddle.nn.initializer.Assign(array))


def _mlp_weights():
    """The full (unsharded) weights of the MLP block, the same on every rank."""
    rng = np.random.RandomState(1234)
    shapes = {"up_w": [HIDDEN, FFN], "up_b": [FFN], "down_w": [FFN, HIDDEN], "down_b": [HIDDEN],
              "head_in": [HIDDEN, FFN], "head_out": [FFN, HIDDEN]}
    return {name: (rng.standard_normal(shape) * 0.3).astype("float32") for name, shape in shapes.items()}


class TensorParallelMLP(paddle.nn.Layer):
    """Megatron-style block: sequence-parallel LayerNorm on this rank's slice of the
    sequence, all-gather, column-parallel up projection, row-parallel down projection,
    reduce-scatter, residual; then the slices gathered and a tensor-parallel head without
    sequence parallelism (c_identity ... mp_allreduce). Every rank sees the same full input
    and computes the same loss; the weights are shards of one seeded full model."""

    def __init__(self):
        super().__init__()
        full = _mlp_weights()
        self.group = model_parallel_group()
        self.norm = paddle.nn.LayerNorm(HIDDEN)
        self.up_w = _parameter(self, _shard(full["up_w"], 1))
        self.up_b = _parameter(self, _shard(full["up_b"], 0), is_bias=True)
        self.down_w = _parameter(self, _shard(full["down_w"], 0))
        self.down_b = _parameter(self, full["down_b"], is_bias=True)
        self.head_in = _parameter(self, _shard(full["head_in"], 1))
        self.head_out = _parameter(self, _shard(full["head_out"], 0))

    def forward(self, hidden):  # [s, b, h], the same on every rank
        group = self.group
        shard = ScatterOp.apply(hidden, group)
        normed = self.norm(shard)
        full_seq = AllGatherOp.apply(normed, group=group)
        inner = F.gelu(paddle.matmul(full_seq, self.up_w) + self.up_b)
        out = ReduceScatterOp.apply(paddle.matmul(inner, self.down_w), group) + self.down_b + shard
        out = GatherOp.apply(out, group)
        head = F.relu(paddle.matmul(CIdentity.apply(out, group), self.head_in))
        return MPAllReduce.apply(paddle.matmul(head, self.head_out), op="sum", group=group) + out

    @staticmethod
    def batch(step):
        return np.random.RandomState(100 + step).standard_normal([SEQ, BATCH, HIDDEN]).astype("float32")

    def sync_gradients(self):
        # sequence-parallel parameters (the LayerNorm, the down projection's bias) saw only
        # this rank's slice of the sequence: sum over ranks
        for param in [*self.norm.parameters(), self.down_b]:
            param.grad.set_value(_all_reduce(param.grad, self.group))


class SerialMLP(paddle.nn.Layer):
    """TensorParallelMLP in one process: the full weights, no PyLayer, no communication. Its
    losses are what the sharded model's must be when the PyLayers' collectives are right."""

    batch = TensorParallelMLP.batch

    def __init__(self):
        super().__init__()
        full = _mlp_weights()
        self.norm = paddle.nn.LayerNorm(HIDDEN)
        for name, array in full.items():
            setattr(self, name, _parameter(self, array, is_bias=name.endswith("_b")))

    def forward(self, hidden):
        inner = F.gelu(paddle.matmul(self.norm(hidden), self.up_w) + self.up_b)
        out = paddle.matmul(inner, self.down_w) + self.down_b + hidden
        return paddle.matmul(F.relu(paddle.matmul(out, self.head_in)), self.head_out) + out

    def sync_gradients(self):
        """Nothing to synchronize: one process holds the whole model."""


class PaddleSequenceParallelMLP(paddle.nn.Layer):
    """TensorParallelMLP's sequence-parallel block with Paddle's own PyLayers, imported from
    `paddle.distributed.fleet.utils.sequence_parallel_utils` as a model library does: this
    rank's slice of the sequence (ScatterOp), sequence-parallel LayerNorm, all-gather
    (AllGatherOp), column-parallel up projection, row-parallel down projection, reduce-scatter
    (ReduceScatterOp), residual, and the slices gathered (GatherOp). The classes take no group:
    they read fleet's model-parallel group. Every rank sees the same full input and computes
    the same loss; the weights are shards of one seeded full model (`SerialBlock`)."""

    batch = staticmethod(TensorParallelMLP.batch)

    def __init__(self):
        super().__init__()
        full = _mlp_weights()
        self.norm = paddle.nn.LayerNorm(HIDDEN)
        self.up_w = _parameter(self, _shard(full["up_w"], 1))
        self.up_b = _parameter(self, _shard(full["up_b"], 0), is_bias=True)
        self.down_w = _parameter(self, _shard(full["down_w"], 0))
        self.down_b = _parameter(self, full["down_b"], is_bias=True)

    def forward(self, hidden):  # [s, b, h], the same on every rank
        shard = PaddleScatterOp.apply(hidden)
        full_seq = PaddleAllGatherOp.apply(self.norm(shard))
        inner = F.gelu(paddle.matmul(full_seq, self.up_w) + self.up_b)
        out = PaddleReduceScatterOp.apply(paddle.matmul(inner, self.down_w)) + self.down_b + shard
        return PaddleGatherOp.apply(out)

    def sync_gradients(self):
        # the LayerNorm and the down projection's bias saw only this rank's slice: sum over ranks
        group = fleet.get_hybrid_communicate_group().get_model_parallel_group()
        for param in [*self.norm.parameters(), self.down_b]:
            param.grad.set_value(_all_reduce(param.grad, group))


class SerialBlock(SerialMLP):
    """PaddleSequenceParallelMLP in one process: SerialMLP's block without its head."""

    def forward(self, hidden):
        inner = F.gelu(paddle.matmul(self.norm(hidden), self.up_w) + self.up_b)
        return paddle.matmul(inner, self.down_w) + self.down_b + hidden


class DataParallelNet(paddle.nn.Layer):
    """Each rank trains on its own batch; batch norm statistics are synchronized inside the
    model and every gradient is averaged over ranks after backward."""

    def __init__(self):
        super().__init__()
        paddle.seed(1234)
        self.fc1 = paddle.nn.Linear(HIDDEN, FFN)
        self.bn_weight = self.create_parameter([FFN], default_initializer=paddle.nn.initializer.Constant(1.0))
        self.bn_bias = self.create_parameter([FFN], is_bias=True)
        self.fc2 = paddle.nn.Linear(FFN, HIDDEN)

    def forward(self, x):  # [n, h], this rank's batch
        h = SyncBatchNorm.apply(self.fc1(x), self.bn_weight, self.bn_bias)
        return self.fc2(paddle.tanh(h))

    @staticmethod
    def batch(step):
        seed = 200 + 10 * step + dist.get_rank()
        return np.random.RandomState(seed).standard_normal([2 * BATCH, HIDDEN]).astype("float32")

    def sync_gradients(self):
        for param in self.parameters():
            param.grad.set_value(_all_reduce(param.grad) / dist.get_world_size())


class ExpertParallelMoE(paddle.nn.Layer):
    """One expert per rank; every token goes to every expert (dense dispatch), weighted by a
    softmax gate: all-to-all to the experts, all-to-all back, combine. The gate is replicated
    (gradients averaged), each expert holds its own weights."""

    def __init__(self):
        super().__init__()
        paddle.seed(1234)
        self.gate = paddle.nn.Linear(HIDDEN, dist.get_world_size())
        paddle.seed(4321 + dist.get_rank())
        self.expert = paddle.nn.Linear(HIDDEN, HIDDEN)
        self.group = model_parallel_group()  # the expert-parallel group

    def forward(self, tokens):  # [t, h], this rank's tokens
        nranks = _ranks(self.group)[0]
        weights = F.softmax(self.gate(tokens), axis=-1)
        received = AllToAll.apply(paddle.concat([tokens] * nranks, axis=0), self.group)
        returned = AllToAll.apply(F.gelu(self.expert(received)), self.group)
        chunks = paddle.split(returned, nranks, axis=0)
        return sum(weights[:, e:e + 1] * chunks[e] for e in range(nranks))

    @staticmethod
    def batch(step):
        seed = 300 + 10 * step + dist.get_rank()
        return np.random.RandomState(seed).standard_normal([BATCH, HIDDEN]).astype("float32")

    def sync_gradients(self):
        for param in self.gate.parameters():
            param.grad.set_value(_all_reduce(param.grad) / dist.get_world_size())


MODELS = {
    "tensor_parallel_mlp": TensorParallelMLP,
    "data_parallel_sync_bn": DataParallelNet,
    "expert_parallel_moe": ExpertParallelMoE,
    "paddle_sequence_parallel_mlp": PaddleSequenceParallelMLP,
}
SERIAL = {"tensor_parallel_mlp": SerialMLP, "paddle_sequence_parallel_mlp": SerialBlock}
