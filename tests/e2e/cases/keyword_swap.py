"""Plain parameters passed as keywords in the reverse order of the signature: eager matches
backward's return values to the tensors in the order they were passed."""
import paddle
from paddle.autograd import PyLayer


class MulAdd(PyLayer):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x * w + b

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensor()
        return dy * w, dy * x, dy


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, w, b):
        return MulAdd.apply(b=b, w=w, x=self.linear(x))


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True), ([2, 3], "float32", True)]
