"""Backward returns one gradient for a list argument holding two tensors (issue 11 item 1,
broken on purpose): eager passes and expects a list per list argument."""
import paddle
from paddle.autograd import PyLayer


def grads_for(dy, parts):
    return [dy for _ in parts[:1]]


class Merge(PyLayer):
    @staticmethod
    def forward(ctx, parts):
        ctx.parts = len(parts)
        return [parts[0] + parts[1]]

    @staticmethod
    def backward(ctx, dy):
        return grads_for(dy, [None] * ctx.parts)


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Merge.apply([x, x * 2.0])[0]


INPUTS = [([2, 4], "float32", True)]
