"""Aliasing between a PyLayer's inputs and outputs, as real code does it: one tensor passed
for two arguments (a gated residual `Gate.apply(h, h)`), forward returning one of its inputs
unchanged next to a computed output (a pass-through of the residual stream), the same
computed tensor returned twice (eager: one tensor, whose gradient goes to its last place),
the passed-through output normalized by a BatchNorm (an in-place op, of its statistics only),
and an output that is a reshape of an input, its shape kept as `ctx.shape = x.shape` (which
dy2static's shape rewrite turned into `_jst.Shape(ctx) = ...`, a SyntaxError)."""
import paddle
from paddle.autograd import PyLayer


class Gate(PyLayer):
    @staticmethod
    def forward(ctx, x, g):
        s = paddle.nn.functional.sigmoid(g)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensor()
        return dy * s, dy * x * s * (1.0 - s)


class PassThrough(PyLayer):
    @staticmethod
    def forward(ctx, residual, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return residual, y

    @staticmethod
    def backward(ctx, d_residual, dy):
        (y,) = ctx.saved_tensor()
        return d_residual * 1.0, dy * (1.0 - y * y)


class Twice(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = x * 3.0
        return y, y

    @staticmethod
    def backward(ctx, da, db):
        return (da + db * 2.0) * 3.0


class Flatten(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return paddle.reshape(x, [-1])

    @staticmethod
    def backward(ctx, dy):
        return paddle.reshape(dy, ctx.shape) * 0.5


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)
        self.norm = paddle.nn.BatchNorm1D(3, use_global_stats=True)  # the same in training and eval

    def forward(self, x):
        h = self.linear(x)
        gated = Gate.apply(h, h)
        residual, y = PassThrough.apply(gated, h)
        residual = self.norm(residual)  # batch_norm_ writes its statistics in place, not residual
        a, b = Twice.apply(y)
        flat = Flatten.apply(residual + a)
        return flat, b * 0.5


INPUTS = [([2, 4], "float32", True)]
