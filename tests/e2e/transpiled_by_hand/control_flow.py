"""Tensor-dependent if in forward and while in backward, through a user helper function."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


def pick(x):
    if paddle.mean(x) > 0:
        y = x * 2.0
    else:
        y = x * -1.0
    return y


class Piecewise(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return pick(x)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        factor = paddle.full([1], 1.0)
        i = paddle.full([1], 0.0)
        while i < 3:
            factor = factor * 1.5
            i = i + 1.0
        if paddle.mean(x) > 0:
            g = dy * 2.0 * factor
        else:
            g = dy * -1.0 * factor
        return g


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        return _p2s.apply(Piecewise, h), _p2s.apply(Piecewise, h - 10.0) * 3.0


INPUTS = [([2, 4], "float32", True)]

# paddle 2.6.2's jit.save (static/io.py normalize_program) pops each pylayer op's
# backward block from the program by a stale index: with two or more pylayer ops it
# fails (IndexError) or exports a broken model, with the framework's own path too.
MODES_2_6 = ("eager", "to_static", "sot", "static", "train")


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(Piecewise)
def _p2s_static_Piecewise(x):
    """Piecewise.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Piecewise, (x,), {})
    return op.build(forward=Piecewise.forward, backward=Piecewise.backward)
# pylayer2static 0.1.0
