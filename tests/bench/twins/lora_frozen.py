"""A LoRA linear whose PyLayer backward computes every input's gradient, the frozen base
weight's too, written twice: with the PyLayer (`PyLayerLoRAHead`, what pylayer2static
transpiles) and with built-in ops only (`TwinLoRAHead`, its twin). `tests/bench/twins.py` times
the two against each other.

A LoRA linear (frozen base weight, trainable rank-8 A and B) on the batch's features, then a
tanh and a mean-square loss. The PyLayer's backward is written as a general library writes it,
not knowing which inputs train: it computes every input's gradient (the base weight's is a
matmul as large as forward's) and returns None for those that stop gradient (eager takes none
there), here the data input and the frozen weight, whose gradients nothing then uses. Autodiff
never builds that work for the twin's built-in matmuls; after inlining, the runtime must drop
it (issue 33, item 3), so the backward program holds the twin's op count and a training step
costs the twin's. B starts non-zero (an adapter already trained) so that A gets gradients from
the first step. The scale is folded into B: a Python-float scale would make the PyLayer's
backward build a `full` for it, where the twin's gradient takes forward's.

One LoRA layer: the op counts then compare the work done. In a stack, the twin's `matmul_grad`
gives both of a matmul's gradients in one op where a hand-written backward has two matmuls,
whatever the runtime does.

Both models have the same parameters under the same names: a twin takes the PyLayer model's
`state_dict()` and must then give the same losses.
"""
from typing import Any, List, NamedTuple

import numpy as np
import paddle
from paddle.autograd import PyLayer

SAME_FORWARD_OPS = True
"""The twin computes each PyLayer's forward with the same ops (tests/bench/twins.py)."""
BACKWARD_OPS_TARGET = 1.0
"""Backward program ops ÷ the twin's (tests/bench/twins.py): what no gradient uses is dropped."""
RANK = 8


class Size(NamedTuple):
    name: str
    batch: int
    hidden: int

    def describe(self) -> str:
        return "batch {}, hidden {}".format(self.batch, self.hidden)


SIZES = (Size("tiny", 4, 32), Size("h512", 256, 512), Size("h1024", 256, 1024))


class LoRALinearAllGradsFn(PyLayer):
    @staticmethod
    def forward(ctx, x, weight, lora_a, lora_b):
        x_a = paddle.matmul(x, lora_a)
        ctx.save_for_backward(x, weight, lora_a, lora_b, x_a)
        ctx.frozen = [t.stop_gradient for t in (x, weight, lora_a, lora_b)]
        return paddle.matmul(x, weight) + paddle.matmul(x_a, lora_b)

    @staticmethod
    def backward(ctx, dy):
        x, weight, lora_a, lora_b, x_a = ctx.saved_tensor()
        d_x_a = paddle.matmul(dy, lora_b, transpose_y=True)
        d_x = paddle.matmul(dy, weight, transpose_y=True) + paddle.matmul(d_x_a, lora_a, transpose_y=True)
        d_weight = paddle.matmul(x, dy, transpose_x=True)
        d_a = paddle.matmul(x, d_x_a, transpose_x=True)
        d_b = paddle.matmul(x_a, dy, transpose_x=True)
        # Eager takes no gradient for an input that stops gradient: computed, then left out.
        return tuple(None if frozen else grad for frozen, grad in zip(ctx.frozen, (d_x, d_weight, d_a, d_b)))


def _normal(layer: paddle.nn.Layer, shape: List[int], std: float) -> Any:
    return layer.create_parameter(shape, default_initializer=paddle.nn.initializer.Normal(0.0, std))


class LoRAWeights(paddle.nn.Layer):
    """The LoRA linear's parameters: frozen `weight`, trainable `lora_a` and `lora_b`."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.weight = _normal(self, [width, width], width ** -0.5)
        self.weight.stop_gradient = True
        self.lora_a = _normal(self, [width, RANK], width ** -0.5)
        self.lora_b = _normal(self, [RANK, width], 0.02)


class LoRAHead(paddle.nn.Layer):
    """The model; subclasses say how the LoRA linear is computed."""

    def __init__(self, size: Size) -> None:
        super().__init__()
        self.lora_weights = LoRAWeights(size.hidden)

    def forward(self, x: Any, target: Any) -> Any:
        y = paddle.tanh(self.lora(x, self.lora_weights))
        return paddle.mean((y - target) * (y - target))


class PyLayerLoRAHead(LoRAHead):
    def lora(self, x: Any, p: LoRAWeights) -> Any:
        return LoRALinearAllGradsFn.apply(x, p.weight, p.lora_a, p.lora_b)


class TwinLoRAHead(LoRAHead):
    def lora(self, x: Any, p: LoRAWeights) -> Any:
        # The PyLayer's forward in its order: an export of either model holds the same ops.
        x_a = paddle.matmul(x, p.lora_a)
        return paddle.matmul(x, p.weight) + paddle.matmul(x_a, p.lora_b)


def batch(size: Size, seed: int) -> List[np.ndarray]:
    """Random inputs and regression targets."""
    rng = np.random.RandomState(seed)
    return [rng.randn(size.batch, size.hidden).astype("float32"), rng.randn(size.batch, size.hidden).astype("float32")]


def input_spec(size: Size) -> List[Any]:
    return [paddle.static.InputSpec([size.batch, size.hidden], "float32", name=name) for name in ("x", "target")]


PYLAYER, TWIN = PyLayerLoRAHead, TwinLoRAHead
RTOL = 1e-4
