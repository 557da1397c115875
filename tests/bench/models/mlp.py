"""A larger model: an MLP of eight layers, each followed by a PyLayer activation, on a small
batch, where per-op overhead dominates."""
import paddle
from paddle.autograd import PyLayer

INPUTS = [([4, 64], "float32", False)]
LAYERS = 8


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


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = paddle.nn.LayerList([paddle.nn.Linear(64, 64) for _ in range(LAYERS)])

    def forward(self, x):
        for layer in self.layers:
            x = Swish.apply(layer(x))
        return paddle.mean(x)
