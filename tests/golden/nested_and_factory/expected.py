"""Module docstring stays first."""
from __future__ import annotations

import paddle; import pylayer2static_runtime as _p2s
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

    return _p2s.applier(Scaled)


class Child(Ops.Double):
    pass


y = _p2s.apply(Ops.Double, paddle.ones([1]))
c = _p2s.apply(Child, y)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Ops.Double)
def _p2s_static_Ops__Double(x):
    """Ops.Double.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Ops.Double, (x,), {})
    return op.build(forward=Ops.Double.forward, backward=Ops.Double.backward)


@_p2s.register(Child)
def _p2s_static_Child(x):
    """Child.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Child, (x,), {})
    return op.build(forward=Child.forward, backward=Child.backward)
# pylayer2static 0.1.0
