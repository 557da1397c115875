"""Module docstring stays first."""
from __future__ import annotations

import paddle
from paddle.autograd import PyLayer as PL


class Ops:
    class Double(PL):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2


def make_layer(k):
    class Scaled(PL):
        @staticmethod
        def forward(ctx, x):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * k

    return Scaled.apply


class Child(Ops.Double):
    pass


y = Ops.Double.apply(paddle.ones([1]))
c = Child.apply(y)
