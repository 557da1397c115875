"""PyLayers without backward (inference-only ones, like the XSoftmax of DeBERTa ports): a
masked softmax over a relative-position prior and a mask fill, both on stop_gradient
inputs, so eager never asks them for a gradient; the rest of the model trains through an
ordinary path that uses their outputs as constants.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class XSoftmax(PyLayer):  # noqa: P2S102 - inference-only on purpose
    @staticmethod
    def forward(ctx, input, mask, dim):
        ctx.dim = dim
        rmask = paddle.logical_not(paddle.cast(mask, "bool"))
        output = paddle.where(rmask, paddle.full_like(input, -1e4), input)
        output = F.softmax(output, axis=dim)
        return paddle.where(rmask, paddle.zeros_like(output), output)


class MaskedFill(PyLayer):  # noqa: P2S102 - inference-only on purpose
    @staticmethod
    def forward(ctx, input, mask, value=0.0):
        return paddle.where(paddle.cast(mask, "bool"), paddle.full_like(input, value), input)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.value = paddle.nn.Linear(4, 4)
        self.out = paddle.nn.Linear(4, 4)

    def forward(self, x, rel_pos):
        # rel_pos: [b, s, s] relative-position scores from a frozen table (no gradient)
        mask = paddle.cast(rel_pos > -1.0, "int32")
        prior = XSoftmax.apply(rel_pos, mask, -1)
        prior = MaskedFill.apply(prior, paddle.cast(prior < 0.05, "int32"), value=0.0)
        mixed = paddle.matmul(prior, self.value(x))
        return self.out(F.gelu(mixed)) + x, prior


INPUTS = [([2, 3, 4], "float32", True), ([2, 3, 3], "float32", False)]
