"""An index out of range in forward (row 7 of 2), which the kernel refuses while the program runs.

The error must name this file's line in forward and the class."""
import paddle
from paddle.autograd import PyLayer


class PickRows(PyLayer):
    @staticmethod
    def forward(ctx, x):
        rows = paddle.to_tensor([0, 7])
        return paddle.index_select(x * 2.0, rows)  # the index out of range

    @staticmethod
    def backward(ctx, dy):
        return dy


class Model(paddle.nn.Layer):
    def forward(self, x):
        return PickRows.apply(x)


INPUTS = [([2, 4], "float32", True)]
