"""Subclasses (ops.py) of a user base PyLayer (base.py), applied from a third module."""
import paddle

import p2scases.ops as ops
from ..base import ScaledBase

INPUTS = [([2, 4], "float32", True)]


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        return ops.Square.apply(h) + ops.Half.apply(h) + ScaledBase.apply(h)
