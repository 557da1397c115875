"""Forward returns two tensors; backward takes two gradients."""
import paddle
from paddle.autograd import PyLayer


class SinCos(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.sin(x), paddle.cos(x)

    @staticmethod
    def backward(ctx, dsin, dcos):
        x, = ctx.saved_tensor()
        return dsin * paddle.cos(x) - dcos * paddle.sin(x)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        s, c = SinCos.apply(self.linear(x))
        return s * 2.0 + c, c


INPUTS = [([2, 4], "float32", True)]
