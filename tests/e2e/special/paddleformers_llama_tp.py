"""One rank of a tiny PaddleFormers Llama trained with tensor parallelism 2 on CPU: the rank
program of test_run_paddleformers.py's two-process tests.

    python -m paddle.distributed.launch --nproc_per_node 2 paddleformers_llama_tp.py CONFIG MODES OUT_DIR

(or under `pylayer2static run --package paddleformers -m paddle.distributed.launch ...`): CONFIG
one of `CONFIGS`, MODES a comma-separated subset of `MODES`; writes OUT_DIR/rank<N>.json,
`{"transpiled": bool, MODE: result}`. The model is paddleformers_llama.py's (hidden 64, 2
layers, a batch of 2 sequences of 16 tokens, 3 AdamW steps from one seed) with
`tensor_model_parallel_size` 2 in fleet's hybrid topology (`mp_degree` 2, gloo): column- and
row-parallel projections, a vocabulary-parallel embedding and LM head, the parallel
cross-entropy. A result holds the loss of each step and, at each step, the norm of every
parameter's gradient on this rank (its shard), or `{"error": ...}`; and the classes of the
model's tensor- and sequence-parallel layers (`parallel_layers`, with their counts).

With `sequence_parallel` the activations between the blocks are split along the sequence axis
by Paddle's own `ScatterOp`, `AllGatherOp`, `ReduceScatterOp` (the runtime's static twins under
to_static); the gradients of the parameters every rank holds whole (the norms' weights) are
summed over the ranks after backward, as the library's trainer does with
`register_sequence_parallel_allreduce_hooks`.

The CPU build has no kernel for fleet's model-parallel ops `c_identity`, `c_concat`, `c_split`,
`c_softmax_with_cross_entropy` ("Unimplemented cpu kernel", eagerly and in static programs), gloo
no reduce-scatter, and fleet's `mp_allreduce` goes back through `c_identity`: `route_mp_ops`
replaces fleet's functions that make them, in this process only and before the model is built,
with PyLayers of the same forward and backward written with `dist.all_reduce` and
`dist.all_gather` (as tests/dist does for its own models). That is the test's doing, for this
machine: the product ships no shim, and on GPU (NCCL) the ops exist.
"""
import json
import os
import sys

import paddle
import paddle.distributed as dist
from paddle.autograd import PyLayer
from paddle.distributed import fleet

import paddleformers_llama as single
from paddleformers.transformers import LlamaConfig, LlamaForCausalLM

NRANKS = 2
CONFIGS = {
    "tp2": {},
    "tp2_sequence_parallel": dict(sequence_parallel=True, max_sequence_length=single.SEQ),
    "tp2_fused_head": single.FUSED,
}
MODES = {"eager": lambda step: step,
         "ast": lambda step: paddle.jit.to_static(step, full_graph=True),
         "sot": lambda step: paddle.jit.to_static(step, full_graph=False)}


def _ranks(group):
    """(nranks, rank) in `group`, read as fleet's layers read them (`dist.get_rank(group)`
    refuses a group outside eager mode); fleet's layers and the library always pass one."""
    return group.nranks, group.rank


def _all_reduce(x, group):
    total = paddle.assign(x)  # all_reduce writes its argument: never a PyLayer's input
    dist.all_reduce(total, group=group)
    return total


def _gather_last_axis(x, group):
    parts = []
    dist.all_gather(parts, x, group=group)
    return paddle.concat(parts, axis=-1)


def _slice_last_axis(x, group):
    nranks, rank = _ranks(group)
    return paddle.split(x, nranks, axis=-1)[rank]


class CIdentity(PyLayer):
    """fleet's `_c_identity`: identity forward, gradients summed over the group."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return paddle.assign(x)

    @staticmethod
    def backward(ctx, grad):
        return _all_reduce(grad, ctx.group)


class MPAllReduce(PyLayer):
    """fleet's `_mp_allreduce`: the sum over the group forward, identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        return _all_reduce(x, group)

    @staticmethod
    def backward(ctx, grad):
        return paddle.assign(grad)


class CConcat(PyLayer):
    """fleet's `_c_concat`: the ranks' shards joined along the last axis; backward, this rank's."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return _gather_last_axis(x, group)

    @staticmethod
    def backward(ctx, grad):
        return _slice_last_axis(grad, ctx.group)


class CSplit(PyLayer):
    """fleet's `_c_split`: this rank's shard of the last axis; backward, the shards joined."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return _slice_last_axis(x, group)

    @staticmethod
    def backward(ctx, grad):
        return _gather_last_axis(grad, ctx.group)


def route_mp_ops():
    """Fleet's model-parallel functions that build the kernel-less ops, replaced where fleet's
    layers (`mp_ops.X`) and the library (`paddle.distributed.collective.X`) look them up. The
    vocabulary-parallel cross-entropy is the whole vocabulary's, its logits joined by `CConcat`:
    the same loss and gradients, the whole row of logits on each rank."""
    from paddle.distributed import collective
    from paddle.distributed.fleet.layers.mpu import mp_ops

    def c_identity(tensor, group=None, skip_c_identity_dynamic=False):
        return CIdentity.apply(tensor, group)

    def c_concat(tensor, group=None):
        return CConcat.apply(tensor, group)

    def c_split(tensor, group=None):
        return CSplit.apply(tensor, group)

    def mp_allreduce(tensor, op=dist.ReduceOp.SUM, group=None, use_calc_stream=True, use_model_parallel=True,
                     skip_c_identity_dynamic=False):
        return MPAllReduce.apply(tensor, group)

    def c_softmax_with_cross_entropy(logits, label, group=None, return_softmax=False, ignore_index=-100):
        assert not return_softmax, "the Llama's loss asks for no softmax"
        if len(label.shape) == len(logits.shape) - 1:
            label = paddle.unsqueeze(label, axis=-1)
        return paddle.nn.functional.softmax_with_cross_entropy(CConcat.apply(logits, group), label,
                                                               ignore_index=ignore_index)

    for module in (mp_ops, collective):
        module._c_identity, module._c_concat, module._c_split = c_identity, c_concat, c_split
        module._c_softmax_with_cross_entropy = c_softmax_with_cross_entropy
    mp_ops._mp_allreduce = mp_allreduce


def route_reduce_scatter(group):
    """gloo has no reduce_scatter and the static op no CPU kernel ("Unimplemented cpu kernel for
    CReduceScatterOp"): the reduce-scatters of Paddle's sequence-parallel PyLayers (eagerly, and
    the static op the runtime builds for them) as an all-reduce and this rank's slice of axis 0
    (tests/dist/models.py `route_reduce_scatter`, 3.x only: paddleformers needs paddle 3.3)."""
    from paddle.distributed.fleet.utils import sequence_parallel_utils

    def eager(input):  # sequence_parallel_utils.reduce_scatter(input)
        return paddle.split(_all_reduce(input, group), group.nranks, axis=0)[group.rank]

    def pir(x, ring_id, nranks):  # paddle._C_ops.reduce_scatter, in a PIR program
        assert ring_id == group.id and nranks == group.nranks, (ring_id, nranks)
        return paddle.split(_all_reduce(x, group), nranks, axis=0)[group.rank]

    sequence_parallel_utils.reduce_scatter = eager
    paddle._C_ops.reduce_scatter = pir


def init_model_parallel():
    """fleet's hybrid topology with both ranks in the model-parallel group; the group."""
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": NRANKS, "pp_degree": 1}
    fleet.init(is_collective=True, strategy=strategy)
    return fleet.get_hybrid_communicate_group().get_model_parallel_group()


def build(name, group):
    """The model of configuration `name`, its shards drawn from one seed each time: the
    column- and row-parallel weights come from fleet's model-parallel generator (a seed of
    each rank's own), which `paddle.seed` leaves where the last model left it."""
    fleet.meta_parallel.model_parallel_random_seed(2024)
    config = LlamaConfig(**single.BASE, **CONFIGS[name], tensor_model_parallel_size=NRANKS,
                         tensor_parallel_rank=group.rank)
    return LlamaForCausalLM(config)


def parallel_layers(model):
    """{class name: count} of the model's layers from fleet's `mpu` and sequence_parallel_utils."""
    found = {}
    for layer in model.sublayers():
        if type(layer).__module__.startswith(("paddle.distributed.fleet.layers.mpu",
                                              "paddle.distributed.fleet.utils.sequence_parallel_utils")):
            found[type(layer).__name__] = found.get(type(layer).__name__, 0) + 1
    return found


def train(name, group, wrap):
    model = build(name, group)
    params = dict(model.named_parameters())
    step = wrap(single.Step(model))
    opt = paddle.optimizer.AdamW(learning_rate=1e-2, parameters=model.parameters())
    ids, labels = (paddle.to_tensor(a) for a in single.batch())
    losses, norms = [], {key: [] for key in params}
    for _ in range(single.STEPS):
        loss = step(ids, labels)
        loss.backward()
        for param in params.values():  # what register_sequence_parallel_allreduce_hooks does
            if getattr(param, "sequence_parallel", False) and param.grad is not None:
                dist.all_reduce(param.grad, group=group)
        losses.append(float(loss))
        for key, param in params.items():
            norms[key].append(None if param.grad is None else float(paddle.linalg.norm(param.grad)))
        opt.step()
        opt.clear_grad(set_to_zero=False)
    return {"losses": losses, "grad_norms": norms, "parallel_layers": parallel_layers(model)}


def main(argv):
    name, modes, out_dir = argv[0], argv[1].split(","), argv[2]
    group = init_model_parallel()
    route_mp_ops()
    route_reduce_scatter(group)
    results = {}
    for mode in modes:
        results[mode] = single.attempt(lambda: train(name, group, MODES[mode]))
        if mode == "sot" and os.environ.get("SOT_COLLECT_INFO"):
            results[mode]["breaks"] = single.sot_breaks()
    module = sys.modules.get("paddleformers.transformers.tensor_parallel_utils")
    results["transpiled"] = hasattr(module, "_p2s") and "_p2s" in globals()
    with open(os.path.join(out_dir, f"rank{dist.get_rank()}.json"), "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1:])
