"""`.apply` the transpiler cannot resolve ahead of time: a PyLayer class held by a layer
(`self.layer_cls.apply`), one passed as a parameter, and a non-PyLayer `.apply` in the same
file. They go through the runtime, which builds a pylayer op for the PyLayers only."""
import paddle
from paddle.autograd import PyLayer


class Swish(PyLayer):
    @staticmethod
    def forward(ctx, x):
        s = paddle.nn.functional.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensor()
        return dy * (s + x * s * (1.0 - s))


class Table:
    """Not a PyLayer: its `apply` is plain Python."""

    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return x * self.scale


def run_layer(layer_cls, x):
    return layer_cls.apply(x)


class Model(paddle.nn.Layer):
    def __init__(self, layer_cls=Swish, table=Table(0.5)):
        super().__init__()
        self.layer_cls = layer_cls
        self.table = table
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer_cls.apply(self.linear(x))
        return self.table.apply(run_layer(self.layer_cls, h))


INPUTS = [([2, 4], "float32", True)]
