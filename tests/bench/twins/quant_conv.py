"""A small quantization-aware-training CNN, written twice: with a straight-through-estimator
fake quantizer PyLayer (`PyLayerQuantCNN`, what pylayer2static transpiles) and with built-in
ops only (`TwinQuantCNN`, its twin: the detach trick `x + (q(x) - x).detach()`, the same math
without any PyLayer, the yardstick). `tests/bench/twins.py` times the two against each other.

Three 3x3 convolutions and a linear classifier; each quantizes its input activation (a fixed
scale, so large activations clip) and its weight (per-tensor abs-max scale, recomputed every
step) to 8 bits. The quantizer rounds and clips in forward and passes the gradient through
where the value was inside the clipping range (bounds included), zero outside. The twin's
trick is applied to the masked value, `m*y + (q(y) - m*y).detach()` for y = x / scale and the
mask m, rather than taking `clip`'s gradient, which passes at the bounds on paddle 3.3.1 and
not on 2.6.2 (the weight's largest value sits on a bound).

Both models have the same parameters and buffers under the same names: a twin takes the
PyLayer model's `state_dict()` and must then give the same losses.
"""
from typing import Any, List, NamedTuple

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer

SAME_FORWARD_OPS = False
"""The twin's detach trick adds ops to the quantizer's forward (tests/bench/twins.py)."""
CLASSES = 10
QMAX = 127.0
ACT_SCALE = 3.0 / QMAX
STRIDES = (1, 2, 2)   # of the three 3x3 convolutions (padding 1)


class Size(NamedTuple):
    name: str
    batch: int
    image: int
    channels: int

    def describe(self) -> str:
        return "batch {}, {}x{} images, {} channels".format(self.batch, self.image, self.image, self.channels)


SIZES = (Size("tiny", 2, 8, 8), Size("c16", 16, 32, 16), Size("c32", 16, 32, 32))


def _inside(y: Any, qmax: float) -> Any:
    """1.0 where `y` is inside the clipping range [-qmax - 1, qmax], else 0.0."""
    return paddle.cast(paddle.logical_and(y >= -qmax - 1.0, y <= qmax), y.dtype)


class FakeQuantSTE(PyLayer):
    @staticmethod
    def forward(ctx, x, scale, qmax):
        y = x / scale
        ctx.save_for_backward(_inside(y, qmax))
        return paddle.round(paddle.clip(y, -qmax - 1.0, qmax)) * scale

    @staticmethod
    def backward(ctx, dy):
        (mask,) = ctx.saved_tensor()
        return dy * mask, None


class QuantCNN(paddle.nn.Layer):
    """The model; subclasses say how the fake quantizer is computed."""

    def __init__(self, size: Size) -> None:
        super().__init__()
        c = size.channels
        self.convs = paddle.nn.LayerList([paddle.nn.Conv2D(i, o, 3, stride=s, padding=1)
                                          for i, o, s in zip((3, c, 2 * c), (c, 2 * c, 2 * c), STRIDES)])
        self.fc = paddle.nn.Linear(2 * c, CLASSES)
        self.register_buffer("act_scale", paddle.to_tensor([ACT_SCALE], dtype="float32"))

    def weight_quant(self, w: Any) -> Any:
        return self.quant(w, paddle.max(paddle.abs(w)).detach() / QMAX)

    def forward(self, x: Any, labels: Any) -> Any:
        for conv, stride in zip(self.convs, STRIDES):
            x = F.relu(F.conv2d(self.quant(x, self.act_scale), self.weight_quant(conv.weight), conv.bias,
                                stride=stride, padding=1))
        logits = F.linear(self.quant(paddle.mean(x, axis=[2, 3]), self.act_scale), self.weight_quant(self.fc.weight),
                          self.fc.bias)
        return F.cross_entropy(logits, labels)


class PyLayerQuantCNN(QuantCNN):
    def quant(self, x: Any, scale: Any) -> Any:
        return FakeQuantSTE.apply(x, scale, QMAX)


class TwinQuantCNN(QuantCNN):
    def quant(self, x: Any, scale: Any) -> Any:
        y = x / scale
        passed = y * _inside(y, QMAX)
        return (passed + (paddle.round(paddle.clip(y, -QMAX - 1.0, QMAX)) - passed).detach()) * scale


def batch(size: Size, seed: int) -> List[np.ndarray]:
    """Images (some values past the activation quantizer's range) and class labels."""
    rng = np.random.RandomState(seed)
    images = (1.5 * rng.standard_normal((size.batch, 3, size.image, size.image))).astype("float32")
    return [images, rng.randint(0, CLASSES, (size.batch, 1)).astype("int64")]


def input_spec(size: Size) -> List[Any]:
    return [paddle.static.InputSpec([size.batch, 3, size.image, size.image], "float32", name="images"),
            paddle.static.InputSpec([size.batch, 1], "int64", name="labels")]


PYLAYER, TWIN = PyLayerQuantCNN, TwinQuantCNN
# Rounding turns a one-ulp difference between kernels into a quantization step: on paddle
# 3.3.1 the static losses of both versions differ from the eager ones by 0.17% after a step.
RTOL = 1e-2
