"""Outputs mixing tensors and a Python number; a 1-tuple stays a 1-tuple.

(Lists of tensors among the outputs crash eager PyLayer itself, so no case has them.)
"""
import paddle
from paddle.autograd import PyLayer


class Parts(PyLayer):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x * scale, scale + 1.0, x * 3.0

    @staticmethod
    def backward(ctx, dy, d3):
        return dy * ctx.scale + d3 * 3.0


class One(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return (paddle.exp(x),)

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        y, bumped, tripled = Parts.apply(h, 2.0)
        single = One.apply(h)
        return y * bumped + tripled * tripled, single[0]


INPUTS = [([2, 4], "float32", True)]
