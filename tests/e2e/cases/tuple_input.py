"""Tensors inside a tuple argument, next to a plain tensor, are op inputs; backward returns
a tuple of gradients for the tuple argument."""
import paddle
from paddle.autograd import PyLayer


class Blend(PyLayer):
    @staticmethod
    def forward(ctx, pair, x, k=2.0):
        a, b = pair
        ctx.k = k
        ctx.save_for_backward(b, x)
        return a * k + b * x

    @staticmethod
    def backward(ctx, dy):
        b, x = ctx.saved_tensor()
        return (dy * ctx.k, dy * x), dy * b


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, y):
        h = self.linear(x)
        return Blend.apply((h, y * 3.0), y)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True)]
# paddle 2.6.2's eager PyLayer mishandles tensors inside tuple arguments as it does lists
# (see list_input.py: gradients go to the wrong tensors depending on which are leaves), so
# its eager reference is wrong and differs between call paths: on 2.6 only the eager call
# itself and the exported forward are compared.
MODES_2_6 = ("eager", "jit_save")
