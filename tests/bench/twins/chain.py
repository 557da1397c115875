"""A chain of 48 small PyLayer calls, written twice: with PyLayers (`PyLayerChain`, what
pylayer2static transpiles) and with built-in ops only (`TwinChain`, its twin: the same math
without any PyLayer, the yardstick). `tests/bench/construction.py` times how long each takes to
build its static graph: a model made of many small custom layers (activations, scales, bias
adds, gated products in the style of public PyLayer code) pays for each call's sub-blocks,
so this is where construction cost per call shows.

Eight blocks of six calls: a linear layer with its own backward, Swish, a bias add, a
straight-through scale, tanh and a gated product, each a PyLayer with a hand-written backward
that computes what autograd computes for the twin's ops.

Both models have the same parameters under the same names: a twin takes the PyLayer model's
`state_dict()` and must then give the same losses.
"""
from typing import Any, List, NamedTuple

import numpy as np
import paddle
from paddle.autograd import PyLayer

SAME_FORWARD_OPS = False
"""Forwards differ in small ways (Swish's sigmoid is kept for backward)."""
BLOCKS = 8
SCALE = 0.5


class Size(NamedTuple):
    name: str
    batch: int
    width: int

    def describe(self) -> str:
        return "batch {}, width {}".format(self.batch, self.width)


SIZES = (Size("w32", 4, 32),)


class LinearFn(PyLayer):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return paddle.matmul(x, weight)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensor()
        return paddle.matmul(grad, weight, transpose_y=True), paddle.matmul(x, grad, transpose_x=True)


class SwishFn(PyLayer):
    @staticmethod
    def forward(ctx, x):
        sig = paddle.nn.functional.sigmoid(x)
        ctx.save_for_backward(x, sig)
        return x * sig

    @staticmethod
    def backward(ctx, grad):
        x, sig = ctx.saved_tensor()
        return grad * (sig + x * sig * (1.0 - sig))


class BiasAddFn(PyLayer):
    @staticmethod
    def forward(ctx, x, bias):
        return x + bias

    @staticmethod
    def backward(ctx, grad):
        return grad, paddle.sum(grad, axis=0)


class ScaleFn(PyLayer):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale


class TanhFn(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensor()
        return grad * (1.0 - y * y)


class GateFn(PyLayer):
    @staticmethod
    def forward(ctx, x, gate):
        ctx.save_for_backward(x, gate)
        return x * gate

    @staticmethod
    def backward(ctx, grad):
        x, gate = ctx.saved_tensor()
        return grad * gate, paddle.sum(grad * x, axis=0)


class ChainBlock(paddle.nn.Layer):
    def __init__(self, width: int, seed: int) -> None:
        super().__init__()
        rng = np.random.RandomState(seed)
        self.weight = self.create_parameter(
            [width, width], default_initializer=paddle.nn.initializer.Assign(
                (rng.standard_normal([width, width]) * width ** -0.5).astype("float32")))
        self.bias = self.create_parameter([width], default_initializer=paddle.nn.initializer.Constant(0.1))
        self.gate = self.create_parameter([width], default_initializer=paddle.nn.initializer.Constant(1.0))


class Chain(paddle.nn.Layer):
    def __init__(self, size: Size) -> None:
        super().__init__()
        self.shift = self.create_parameter([size.width], default_initializer=paddle.nn.initializer.Constant(0.0))
        self.blocks = paddle.nn.LayerList([ChainBlock(size.width, seed) for seed in range(BLOCKS)])

    def forward(self, x: Any) -> Any:
        x = x + self.shift  # the first LinearFn's input then needs its gradient, as every later one's
        for block in self.blocks:
            x = self.gated(self.tanh(self.scale(self.bias_add(self.swish(self.linear(x, block.weight)),
                                                               block.bias))), block.gate)
        return paddle.mean(x * x)


class PyLayerChain(Chain):
    def linear(self, x: Any, weight: Any) -> Any:
        return LinearFn.apply(x, weight)

    def swish(self, x: Any) -> Any:
        return SwishFn.apply(x)

    def bias_add(self, x: Any, bias: Any) -> Any:
        return BiasAddFn.apply(x, bias)

    def scale(self, x: Any) -> Any:
        return ScaleFn.apply(x, SCALE)

    def tanh(self, x: Any) -> Any:
        return TanhFn.apply(x)

    def gated(self, x: Any, gate: Any) -> Any:
        return GateFn.apply(x, gate)


class TwinChain(Chain):
    def linear(self, x: Any, weight: Any) -> Any:
        return paddle.matmul(x, weight)

    def swish(self, x: Any) -> Any:
        return x * paddle.nn.functional.sigmoid(x)

    def bias_add(self, x: Any, bias: Any) -> Any:
        return x + bias

    def scale(self, x: Any) -> Any:
        return x * SCALE

    def tanh(self, x: Any) -> Any:
        return paddle.tanh(x)

    def gated(self, x: Any, gate: Any) -> Any:
        return x * gate


def batch(size: Size, seed: int) -> List[np.ndarray]:
    return [np.random.RandomState(seed).standard_normal([size.batch, size.width]).astype("float32")]


def input_spec(size: Size) -> List[Any]:
    return [paddle.static.InputSpec([size.batch, size.width], "float32", name="x")]


PYLAYER, TWIN = PyLayerChain, TwinChain
RTOL = 1e-4
