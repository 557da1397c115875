"""Outputs unused by the loss: the model drops one of three outputs and uses another only
in a non-differentiable way; backward still gets one gradient per output (zeros)."""
import paddle
from paddle.autograd import PyLayer


class Three(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2.0, paddle.exp(x), x * x

    @staticmethod
    def backward(ctx, d_double, d_exp, d_square):
        x, = ctx.saved_tensor()
        return d_double * 2.0 + d_exp * paddle.exp(x) + d_square * 2.0 * x


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        doubled, _unused, squared = Three.apply(self.linear(x))
        return doubled + squared.detach()


INPUTS = [([2, 4], "float32", True)]
