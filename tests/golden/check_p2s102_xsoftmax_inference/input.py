"""Inference-only PyLayers, as in FleetX's DeBERTa: eager runs them forward-only."""
import paddle
from paddle.autograd import PyLayer


class XSoftmax(PyLayer):
    @staticmethod
    def forward(ctx, input, mask, dim):
        rmask = paddle.logical_not(mask.astype("bool"))
        output = paddle.where(rmask, paddle.full_like(input, -1e9), input)
        return paddle.nn.functional.softmax(output, axis=dim)


class XDropout(PyLayer):
    @staticmethod
    def forward(ctx, input, local_ctx):
        return input * (1.0 - local_ctx)


class Attention(paddle.nn.Layer):
    def forward(self, scores, mask):
        probs = XSoftmax.apply(scores, mask, -1)
        return XDropout.apply(probs, 0.0)
