"""A model that returns, as the PyLayer does, Python values among its tensors: forward
returns a format version, None for a cache it does not keep, two tensors and a string tag
(`return 1, None, a, b, tag`), backward gets the two tensors' gradients; the model passes
them on with a nested list. Under to_static the framework counts one output per returned
value when it says where backward starts (paddle 2.6.2 partial_program.py
`_append_backward_desc`); training inlining (legacy_inline.py) counts ops."""
import paddle
from paddle.autograd import PyLayer


class GatedResidual(PyLayer):
    @staticmethod
    def forward(ctx, x, gate, tag):
        s = paddle.nn.functional.sigmoid(gate)
        ctx.save_for_backward(x, s)
        return 1, None, x * s, x + s, tag

    @staticmethod
    def backward(ctx, d_gated, d_residual):
        x, s = ctx.saved_tensor()
        ds = (d_gated * x + d_residual) * s * (1.0 - s)
        return d_gated * s + d_residual, ds.sum(axis=0)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = paddle.nn.Linear(4, 4)
        self.gate = self.create_parameter([4])

    def forward(self, x):
        version, cache, gated, residual, tag = GatedResidual.apply(self.proj(x), self.gate, "gated")
        return version, cache, gated, [residual, tag]


INPUTS = [([3, 4], "float32", True)]
