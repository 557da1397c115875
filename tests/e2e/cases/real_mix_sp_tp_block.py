"""Mix: a simulated 2-way tensor + sequence parallel MLP block, PyLayers chained with lists
between them: scatter returns a list of shards, a rank-wise RMSNorm takes and returns a
list, all-gather and reduce-scatter take `*shards` (and a keyword-only rank count).

Each rank also fake-quantizes the gathered activation with a per-token scale (keywords out
of order, non-tensor bit width and axis) before its column shard.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer

NRANKS = 2


class ScatterToRanks(PyLayer):
    @staticmethod
    def forward(ctx, input, nranks):
        return paddle.split(input, nranks, axis=0)

    @staticmethod
    def backward(ctx, *grads):
        return paddle.concat(list(grads), axis=0)


class AllGatherFromRanks(PyLayer):
    @staticmethod
    def forward(ctx, *shards):
        ctx.sizes = [s.shape[0] for s in shards]
        return paddle.concat(list(shards), axis=0)

    @staticmethod
    def backward(ctx, grad):
        return tuple(paddle.split(grad, ctx.sizes, axis=0))


class ReduceScatterToRanks(PyLayer):
    @staticmethod
    def forward(ctx, *partials, nranks):
        ctx.count = len(partials)
        return paddle.split(paddle.add_n(list(partials)), nranks, axis=0)

    @staticmethod
    def backward(ctx, *grads):
        full = paddle.concat(list(grads), axis=0)
        return tuple(full for _ in range(ctx.count))


class RankwiseRMSNorm(PyLayer):
    """RMSNorm of each rank's shard with the (replicated) weight; the weight's gradient is
    the sum over ranks, as the sequence-parallel parameter hook all-reduces it."""

    @staticmethod
    def forward(ctx, shards, weight, epsilon=1e-6):
        outs, saved = [], []
        for shard in shards:
            rms = paddle.rsqrt(paddle.mean(shard * shard, axis=-1, keepdim=True) + epsilon)
            normed = shard * rms
            saved += [normed, rms]
            outs.append(normed * weight)
        ctx.save_for_backward(weight, *saved)
        return outs

    @staticmethod
    def backward(ctx, *grads):
        weight, *saved = ctx.saved_tensor()
        grad_shards, grad_weight = [], None
        for i, grad in enumerate(grads):
            normed, rms = saved[2 * i], saved[2 * i + 1]
            axes = list(range(len(grad.shape) - 1))
            gw = paddle.sum(grad * normed, axis=axes)
            grad_weight = gw if grad_weight is None else grad_weight + gw
            gn = grad * weight
            grad_shards.append((gn - normed * paddle.mean(gn * normed, axis=-1, keepdim=True)) * rms)
        return grad_shards, grad_weight


class FakeQuantSTE(PyLayer):
    @staticmethod
    def forward(ctx, x, scale, bit_length=8, quant_axis=None):
        bnt = (1 << (bit_length - 1)) - 1
        s = paddle.clip(scale, min=1e-8)
        if quant_axis is not None:  # a per-channel scale along quant_axis
            shape = [1] * len(x.shape)
            shape[quant_axis] = -1
            s = paddle.reshape(s, shape)
        ctx.save_for_backward(paddle.cast(paddle.abs(x) <= s, x.dtype))
        return paddle.round(paddle.clip(x / s, -1.0, 1.0) * bnt) / bnt * s

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensor()
        return grad * mask, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm_weight = self.create_parameter([8], default_initializer=paddle.nn.initializer.Constant(1.0))
        self.up = paddle.nn.LayerList([paddle.nn.Linear(8, 6, bias_attr=False) for _ in range(NRANKS)])
        self.down = paddle.nn.LayerList([paddle.nn.Linear(6, 8, bias_attr=False) for _ in range(NRANKS)])

    def forward(self, hidden):
        hidden = paddle.transpose(hidden, [1, 0, 2])  # [s, b, h]
        shards = ScatterToRanks.apply(hidden, NRANKS)
        normed = RankwiseRMSNorm.apply(shards, self.norm_weight, epsilon=1e-5)
        full = AllGatherFromRanks.apply(*normed)
        # per-token activation scale, 0.9 of the token's abs-max so the largest values clip
        token_scale = (0.9 * paddle.max(paddle.abs(full), axis=-1, keepdim=True)).detach()
        partials = []
        for up, down in zip(self.up, self.down):
            quanted = FakeQuantSTE.apply(full, token_scale, quant_axis=None, bit_length=8)
            partials.append(down(F.silu(up(quanted))))
        out_shards = ReduceScatterToRanks.apply(*partials, nranks=NRANKS)
        out = AllGatherFromRanks.apply(*[o + s for o, s in zip(out_shards, shards)])
        return paddle.transpose(out, [1, 0, 2])


INPUTS = [([2, 4, 8], "float32", True)]
# paddle 2.6.2's eager PyLayer mishandles tensors inside list arguments (see list_input.py:
# the gradient of the list's first tensor goes to its last leaf tensor, the others get none),
# so there is no eager reference for gradients: on 2.6 only the eager call itself and the
# exported forward are compared.
MODES_2_6 = ("eager", "jit_save")
