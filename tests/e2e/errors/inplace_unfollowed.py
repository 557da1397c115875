"""An in-place API imported by name (`from paddle import scatter_`), which the runtime
cannot swap: its write would be lost in a static graph (later reads stale), so it is
refused at the user's line, saying how to call it instead."""
import paddle
from paddle import scatter_
from paddle.autograd import PyLayer


class ScatterRows(PyLayer):
    @staticmethod
    def forward(ctx, rows):
        out = paddle.zeros_like(rows)
        scatter_(out, paddle.to_tensor([1, 0]), rows)
        return out

    @staticmethod
    def backward(ctx, grad):
        return paddle.gather(grad, paddle.to_tensor([1, 0]))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x):
        return ScatterRows.apply(self.fc(x))


INPUTS = [([2, 4], "float32", True)]
