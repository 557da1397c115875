"""PyLayers of another module applied in sublayers with parameters, in a loop; helpers,
a decorator, private names and saved tensors from ops.py/helpers.py."""
import paddle

from p2scases import Poly
from p2scases.helpers import Scaler
from p2scases.ops import Smooth

INPUTS = [([2, 4], "float32", True)]


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(3, 3)
        self.scaler = Scaler(0.5)

    def forward(self, x):
        return Smooth.apply(self.linear(x), self.scaler)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.inp = paddle.nn.Linear(4, 3)
        self.blocks = paddle.nn.LayerList([Block() for _ in range(2)])

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = Poly.apply(block(h)) * 0.1
        return h
