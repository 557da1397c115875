"""A gradient requested through a PyLayer without backward (issue 11 item 4, broken on
purpose): eager raises NotImplementedError in backward; the static graph says so too."""
import paddle
from paddle.autograd import PyLayer


class Relu(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.nn.functional.relu(x)


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Relu.apply(x * 2.0)


INPUTS = [([2, 4], "float32", True)]
