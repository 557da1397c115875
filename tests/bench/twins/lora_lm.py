"""A LoRA transformer language model of two blocks, written twice: with PyLayers
(`PyLayerLM`, what pylayer2static transpiles) and with built-in ops only (`TwinLM`, its twin:
the same math without any PyLayer, the yardstick). `tests/bench/twins.py` times the two
against each other.

Per block: RMSNorm (a PyLayer with its own backward), causal self-attention whose four
projections are LoRA linears (a PyLayer: frozen base weight, trainable rank-8 A and B, a
backward that skips the frozen weight's gradient) and a SwiGLU MLP (one PyLayer for the
three matmuls, backward by hand); then a final RMSNorm and a fused linear + cross-entropy
head (a PyLayer in the style of PaddleNLP's fused head: forward gives the mean loss only,
backward recomputes the logits and softmax and gives the hidden states' and the weight's
gradients). Attention itself is built-in ops in both. Every weight but the attention's base
weights trains, so each PyLayer's backward has all its work to do; B starts non-zero (an
adapter already trained) so that A gets gradients from the first step.

Both models have the same parameters under the same names: a twin takes the PyLayer
model's `state_dict()` and must then give the same losses, or the benchmark means nothing.
"""
from typing import Any, List, NamedTuple

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer

SAME_FORWARD_OPS = True
"""The twin computes each PyLayer's forward with the same ops (tests/bench/twins.py)."""
VOCAB = 512
HEAD_DIM = 32
RANK = 8
LORA_SCALE = 2.0
BLOCKS = 2
EPS = 1e-6


class Size(NamedTuple):
    name: str
    batch: int
    seq: int
    hidden: int

    def describe(self) -> str:
        return "batch {}, seq {}, hidden {}".format(self.batch, self.seq, self.hidden)


SIZES = (Size("tiny", 2, 8, 32), Size("h128", 8, 64, 128), Size("h256", 8, 64, 256),
         Size("h384", 8, 64, 384))


class RMSNormFn(PyLayer):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = paddle.rsqrt(paddle.mean(x * x, axis=-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        return x * rstd * weight

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensor()
        x_hat = x * rstd
        d_weight = paddle.sum(dy * x_hat, axis=[0, 1])
        d_x_hat = dy * weight
        d_x = rstd * (d_x_hat - x_hat * paddle.mean(d_x_hat * x_hat, axis=-1, keepdim=True))
        return d_x, d_weight


class LoRALinearFn(PyLayer):
    @staticmethod
    def forward(ctx, x, weight, lora_a, lora_b, scale):
        x_a = paddle.matmul(x, lora_a)
        ctx.save_for_backward(x, weight, lora_a, lora_b, x_a)
        ctx.scale = scale
        return paddle.matmul(x, weight) + paddle.matmul(x_a, lora_b) * scale

    @staticmethod
    def backward(ctx, dy):
        x, weight, lora_a, lora_b, x_a = ctx.saved_tensor()
        rank, width = lora_b.shape
        d_x_a = paddle.matmul(dy, lora_b, transpose_y=True) * ctx.scale
        d_x = paddle.matmul(dy, weight, transpose_y=True) + paddle.matmul(d_x_a, lora_a, transpose_y=True)
        d_a = paddle.matmul(x.reshape([-1, lora_a.shape[0]]), d_x_a.reshape([-1, rank]), transpose_x=True)
        d_b = paddle.matmul(x_a.reshape([-1, rank]), dy.reshape([-1, width]), transpose_x=True) * ctx.scale
        return d_x, None, d_a, d_b


class SwiGLUMLPFn(PyLayer):
    @staticmethod
    def forward(ctx, x, w_gate, w_up, w_down):
        gate = paddle.matmul(x, w_gate)
        up = paddle.matmul(x, w_up)
        ctx.save_for_backward(x, w_gate, w_up, w_down, gate, up)
        return paddle.matmul(F.silu(gate) * up, w_down)

    @staticmethod
    def backward(ctx, dy):
        x, w_gate, w_up, w_down, gate, up = ctx.saved_tensor()
        hidden, inner = w_gate.shape
        sig = F.sigmoid(gate)
        act = gate * sig
        d_h = paddle.matmul(dy, w_down, transpose_y=True)
        d_up = d_h * act
        d_gate = d_h * up * sig * (1.0 + gate * (1.0 - sig))
        d_x = paddle.matmul(d_gate, w_gate, transpose_y=True) + paddle.matmul(d_up, w_up, transpose_y=True)
        x_2d = x.reshape([-1, hidden])
        d_w_gate = paddle.matmul(x_2d, d_gate.reshape([-1, inner]), transpose_x=True)
        d_w_up = paddle.matmul(x_2d, d_up.reshape([-1, inner]), transpose_x=True)
        d_w_down = paddle.matmul((act * up).reshape([-1, inner]), dy.reshape([-1, hidden]), transpose_x=True)
        return d_x, d_w_gate, d_w_up, d_w_down


class FusedLinearCrossEntropyFn(PyLayer):
    @staticmethod
    def forward(ctx, hidden, weight, labels):
        logits = paddle.matmul(hidden.reshape([-1, weight.shape[0]]), weight)
        picked = paddle.take_along_axis(logits, labels.reshape([-1, 1]), axis=-1)
        ctx.save_for_backward(hidden, weight, labels)
        return paddle.mean(paddle.logsumexp(logits, axis=-1) - picked.reshape([-1]))

    @staticmethod
    def backward(ctx, d_loss):
        hidden, weight, labels = ctx.saved_tensor()
        width, vocab = weight.shape
        hidden_2d = hidden.reshape([-1, width])
        probs = F.softmax(paddle.matmul(hidden_2d, weight), axis=-1)
        tokens = paddle.cast(paddle.numel(labels), hidden.dtype)
        d_logits = (probs - F.one_hot(labels.reshape([-1]), vocab)) * (d_loss / tokens)
        d_hidden = paddle.matmul(d_logits, weight, transpose_y=True).reshape(hidden.shape)
        return d_hidden, paddle.matmul(hidden_2d, d_logits, transpose_x=True), None


def _normal(layer: paddle.nn.Layer, shape: List[int], std: float) -> Any:
    return layer.create_parameter(shape, default_initializer=paddle.nn.initializer.Normal(0.0, std))


class LoRAWeights(paddle.nn.Layer):
    """One LoRA projection's parameters: frozen `weight`, trainable `lora_a` and `lora_b`."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.weight = _normal(self, [width, width], width ** -0.5)
        self.weight.stop_gradient = True
        self.lora_a = _normal(self, [width, RANK], width ** -0.5)
        self.lora_b = _normal(self, [RANK, width], 0.02)


class Block(paddle.nn.Layer):
    """One transformer block's parameters (the model applies them)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        inner = (8 * width // 3 + 7) // 8 * 8
        ones = paddle.nn.initializer.Constant(1.0)
        self.attn_norm = self.create_parameter([width], default_initializer=ones)
        self.q, self.k, self.v, self.o = (LoRAWeights(width) for _ in range(4))
        self.mlp_norm = self.create_parameter([width], default_initializer=ones)
        self.w_gate = _normal(self, [width, inner], width ** -0.5)
        self.w_up = _normal(self, [width, inner], width ** -0.5)
        self.w_down = _normal(self, [inner, width], inner ** -0.5)


class LoRALM(paddle.nn.Layer):
    """The model; subclasses say how its four custom pieces are computed."""

    def __init__(self, size: Size) -> None:
        super().__init__()
        self.size = size
        self.embedding = _normal(self, [VOCAB, size.hidden], 1.0)
        self.blocks = paddle.nn.LayerList([Block(size.hidden) for _ in range(BLOCKS)])
        self.final_norm = self.create_parameter([size.hidden], default_initializer=paddle.nn.initializer.Constant(1.0))
        self.head = _normal(self, [size.hidden, VOCAB], size.hidden ** -0.5)

    def split_heads(self, x: Any) -> Any:
        return x.reshape([0, 0, self.size.hidden // HEAD_DIM, HEAD_DIM]).transpose([0, 2, 1, 3])

    def attention(self, x: Any, block: Block) -> Any:
        q = self.split_heads(self.lora(x, block.q))
        k = self.split_heads(self.lora(x, block.k))
        v = self.split_heads(self.lora(x, block.v))
        mask = paddle.triu(paddle.full([self.size.seq, self.size.seq], -1e4, "float32"), diagonal=1)
        probs = F.softmax(paddle.matmul(q, k, transpose_y=True) * HEAD_DIM ** -0.5 + mask, axis=-1)
        context = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([0, 0, self.size.hidden])
        return self.lora(context, block.o)

    def forward(self, ids: Any, labels: Any) -> Any:
        h = F.embedding(ids, self.embedding)
        for block in self.blocks:
            h = h + self.attention(self.rms_norm(h, block.attn_norm), block)
            h = h + self.mlp(self.rms_norm(h, block.mlp_norm), block)
        return self.loss(self.rms_norm(h, self.final_norm), self.head, labels)


class PyLayerLM(LoRALM):
    def rms_norm(self, x: Any, weight: Any) -> Any:
        return RMSNormFn.apply(x, weight, EPS)

    def lora(self, x: Any, p: LoRAWeights) -> Any:
        return LoRALinearFn.apply(x, p.weight, p.lora_a, p.lora_b, LORA_SCALE)

    def mlp(self, x: Any, block: Block) -> Any:
        return SwiGLUMLPFn.apply(x, block.w_gate, block.w_up, block.w_down)

    def loss(self, hidden: Any, weight: Any, labels: Any) -> Any:
        return FusedLinearCrossEntropyFn.apply(hidden, weight, labels)


class TwinLM(LoRALM):
    def rms_norm(self, x: Any, weight: Any) -> Any:
        return x * paddle.rsqrt(paddle.mean(x * x, axis=-1, keepdim=True) + EPS) * weight

    def lora(self, x: Any, p: LoRAWeights) -> Any:
        return paddle.matmul(x, p.weight) + paddle.matmul(paddle.matmul(x, p.lora_a), p.lora_b) * LORA_SCALE

    def mlp(self, x: Any, block: Block) -> Any:
        # The PyLayer's forward in its order (both projections, then the activation): an
        # export of either model then holds the same ops in the same order.
        gate = paddle.matmul(x, block.w_gate)
        up = paddle.matmul(x, block.w_up)
        return paddle.matmul(F.silu(gate) * up, block.w_down)

    def loss(self, hidden: Any, weight: Any, labels: Any) -> Any:
        # The PyLayer's forward, op for op (not F.cross_entropy's fused op): an export of
        # either model then holds the same ops.
        logits = paddle.matmul(hidden.reshape([-1, self.size.hidden]), weight)
        picked = paddle.take_along_axis(logits, labels.reshape([-1, 1]), axis=-1)
        return paddle.mean(paddle.logsumexp(logits, axis=-1) - picked.reshape([-1]))


def batch(size: Size, seed: int) -> List[np.ndarray]:
    """Token ids and next-token labels of a random sequence."""
    tokens = np.random.RandomState(seed).randint(0, VOCAB, (size.batch, size.seq + 1)).astype("int64")
    return [tokens[:, :-1], tokens[:, 1:]]


def input_spec(size: Size) -> List[Any]:
    return [paddle.static.InputSpec([size.batch, size.seq], "int64", name=name) for name in ("ids", "labels")]


PYLAYER, TWIN = PyLayerLM, TwinLM
# Losses of all variants agree to 1.4e-7 here; the margin is for other CPUs' kernels.
RTOL = 1e-4
