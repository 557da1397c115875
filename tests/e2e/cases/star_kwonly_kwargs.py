"""forward(ctx, x, *xs, scale, **options) called with extra positional tensors, a keyword-only
tensor and tensors among **options, keywords written in another order than the signature:
eager matches backward's gradients to the tensor arguments in the order written (positional
first, then the keywords as written)."""
import paddle
from paddle.autograd import PyLayer


class GatedSum(PyLayer):
    @staticmethod
    def forward(ctx, x, *xs, scale, **options):
        gate = options["gate"]
        shift = options.get("shift", 0.0)
        ctx.count = len(xs)
        ctx.save_for_backward(x, gate, scale, *xs)
        total = x
        for v in xs:
            total = total + v
        return total * gate * scale + shift

    @staticmethod
    def backward(ctx, dy):
        x, gate, scale, *xs = ctx.saved_tensor()
        total = x
        for v in xs:
            total = total + v
        d_total = dy * gate * scale
        grads = [d_total] + [d_total * (i + 1.0) / (i + 1.0) for i in range(ctx.count)]
        # keywords in the order they were written at the call: gate, scale (shift is a float)
        return tuple(grads) + (dy * total * scale, (dy * total * gate).sum(axis=0, keepdim=True))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(4, 3)
        self.b = paddle.nn.Linear(4, 3)
        self.scale = self.create_parameter([1, 3], default_initializer=paddle.nn.initializer.Constant(0.7))

    def forward(self, x):
        h1, h2 = self.a(x), self.b(x)
        gate = paddle.nn.functional.sigmoid(h2)
        y = GatedSum.apply(h1, h2, h1 * h2, gate=gate, scale=self.scale, shift=0.25)
        z = GatedSum.apply(y, gate=gate * 0.5, scale=self.scale)
        return y, z


INPUTS = [([2, 4], "float32", True)]
# paddle 2.6.2's SOT computes wrong gradients when a subgraph before a graph break returns
# both a tensor and a function of it (here h2 and sigmoid(h2)), with or without a PyLayer
# (a graph break by `.numpy()` does the same); its jit_save fails as in the other cases
# ("pop index out of range").
MODES_2_6 = ("eager", "to_static", "static", "train")
