"""Subclasses (ops.py) of a user base PyLayer (base.py), applied from a third module."""
import paddle

import p2scases.ops as ops
from ..base import ScaledBase

INPUTS = [([2, 4], "float32", True)]
# paddle 2.6.2's jit.save (static/io.py normalize_program) pops each pylayer op's
# backward block from the program by a stale index: with two or more pylayer ops it
# fails (IndexError) or exports a broken model, with the framework's own path too.
MODES_2_6 = ("eager", "to_static", "sot", "static", "train")


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        return ops.Square.apply(h) + ops.Half.apply(h) + ScaledBase.apply(h)
