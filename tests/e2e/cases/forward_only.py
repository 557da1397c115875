"""PyLayers without backward (inference-only, like FleetX DeBERTa's XSoftmax/XDropout): eager
runs them forward only; applied where no gradient is needed (a mask from a detached tensor,
under paddle.no_grad), next to a differentiable path."""
import paddle
from paddle.autograd import PyLayer


class MaskedFill(PyLayer):  # noqa: P2S102 - forward-only on purpose
    @staticmethod
    def forward(ctx, x, mask, value=-1e4):
        return paddle.where(mask, paddle.full_like(x, value), x)


class XSoftmax(PyLayer):  # noqa: P2S102 - forward-only on purpose
    @staticmethod
    def forward(ctx, x, mask, axis):
        filled = paddle.where(mask, paddle.full_like(x, -1e4), x)
        return paddle.nn.functional.softmax(filled, axis=axis)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        mask = h.detach() > 0.5
        weights = XSoftmax.apply(h.detach(), mask, -1)
        with paddle.no_grad():
            bias = MaskedFill.apply(h, mask, value=0.0)
        return h * weights + bias


INPUTS = [([2, 4], "float32", True)]
# paddle 2.6.2's static graphs ignore `paddle.no_grad()` (see under_no_grad.py), so there
# MaskedFill's input needs a gradient, and the Program IR, which builds backward with the
# op, refuses a PyLayer without backward then (PyLayerContractError naming the class), jit_save too.
MODES_2_6 = ("eager", "sot")
