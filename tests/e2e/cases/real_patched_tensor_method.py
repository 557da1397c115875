"""A method a library patches onto `paddle.Tensor` at import, written in Python over Tensor
ops (as PaddleNLP-style utility modules add `masked_mean`-like helpers), called on the
tensors of a PyLayer's forward and backward. Static values do not have it; the runtime binds
the same function to them, so it runs as eager does (eager_only.py `_missing_attribute`)."""
import paddle
from paddle.autograd import PyLayer


def _p2s_case_masked_scale(self, mask, scale=1.0):
    """`self` where `mask` is set, times `scale`; zero elsewhere."""
    return paddle.where(mask, self * scale, paddle.zeros_like(self))


paddle.Tensor.p2s_case_masked_scale = _p2s_case_masked_scale


class MaskedScale(PyLayer):
    @staticmethod
    def forward(ctx, x, scale):
        mask = x > 0.0
        ctx.save_for_backward(mask)
        ctx.scale = scale
        return x.p2s_case_masked_scale(mask, scale)

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensor()
        return grad.p2s_case_masked_scale(mask, ctx.scale)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 5)

    def forward(self, x):
        return MaskedScale.apply(self.fc(x), 3.0)


INPUTS = [([3, 4], "float32", True)]
