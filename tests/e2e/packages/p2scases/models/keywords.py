"""Keyword-only arguments, keywords in another order than the signature (across modules)."""
import paddle

from p2scases import Affine

INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True)]


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, w):
        h = self.linear(x)
        return Affine.apply(h, shift=1.0, scale=2.0, w=w)
