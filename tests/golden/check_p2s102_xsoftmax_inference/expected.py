"""Inference-only PyLayers, as in FleetX's DeBERTa: eager runs them forward-only."""
import paddle; import pylayer2static_runtime as _p2s
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
        probs = _p2s.apply(XSoftmax, scores, mask, -1)
        return _p2s.apply(XDropout, probs, 0.0)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(XSoftmax)
def _p2s_static_XSoftmax(input, mask, dim):
    """XSoftmax.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(XSoftmax, (input, mask, dim), {})
    return op.build(forward=XSoftmax.forward, backward=XSoftmax.backward)


@_p2s.register(XDropout)
def _p2s_static_XDropout(input, local_ctx):
    """XDropout.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(XDropout, (input, local_ctx), {})
    return op.build(forward=XDropout.forward, backward=XDropout.backward)
# pylayer2static 0.1.0
