"""A forward that writes in place into a view (`y[0]` of a tensor it made, then
`scale_`): eager's write reaches `y` through the view, a static graph's does not
(the write gives a new value; `y` keeps its old row). Refused at the user's line."""
import paddle
from paddle.autograd import PyLayer


class ScaleFirstRow(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = x * 1.0
        row = y[0]
        row.scale_(2.0)
        return y

    @staticmethod
    def backward(ctx, grad):
        return grad


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x):
        return ScaleFirstRow.apply(self.fc(x))


INPUTS = [([2, 4], "float32", True)]
