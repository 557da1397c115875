"""One PyLayer applied many times: in a Python loop, in every sublayer of a LayerList
(each with its own parameters), and twice on the same tensor."""
import paddle
from paddle.autograd import PyLayer


class Gelu(PyLayer):
    @staticmethod
    def forward(ctx, x):
        s = paddle.nn.functional.sigmoid(1.702 * x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensor()
        return dy * (s + 1.702 * x * s * (1.0 - s))


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(3, 3)
        self.gain = self.create_parameter([3], default_initializer=paddle.nn.initializer.Constant(1.5))

    def forward(self, x):
        return Gelu.apply(self.linear(x)) * self.gain


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.inp = paddle.nn.Linear(4, 3)
        self.blocks = paddle.nn.LayerList([Block() for _ in range(3)])

    def forward(self, x):
        h = self.inp(x)
        for _ in range(2):
            h = Gelu.apply(h) + h * 0.1
        for block in self.blocks:
            h = block(h)
        return Gelu.apply(h) + Gelu.apply(h) * 2.0


INPUTS = [([2, 4], "float32", True)]
