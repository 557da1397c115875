import paddle

from p2spkg import Scale
from .layers import Block, Shifted

INPUTS = [((2, 4), "float32", True)]


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.block(x)
        h = Scale.apply(h) + Shifted.apply(h)
        return self.head(h)
