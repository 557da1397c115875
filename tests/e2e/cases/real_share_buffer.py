"""A fused bias + GeLU that writes its result into a preallocated output by sharing the
buffer (`y._share_buffer_to(out)`, as Paddle's fused kernels' Python wrappers do), and a
backward that hands its gradient over the same way. Static values have no
`_share_buffer_to`; the runtime runs it as an assign of `y` into `out`, followed as the
in-place write it is (eager_only.py `_share_buffer_to`)."""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class FusedBiasGelu(PyLayer):
    @staticmethod
    def forward(ctx, x, bias):
        out = paddle.empty_like(x)
        y = F.gelu(x + bias)
        y._share_buffer_to(out)
        ctx.save_for_backward(x, bias)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, bias = ctx.saved_tensor()
        with paddle.enable_grad():
            h = (x + bias).detach()
            h.stop_gradient = False
            y = F.gelu(h)
        (grad_h,) = paddle.grad([y], [h], [grad])
        grad_x = paddle.zeros_like(grad_h)
        grad_h._share_buffer_to(grad_x)
        return grad_x, paddle.sum(grad_h, axis=0)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 6)
        self.bias = self.create_parameter([6], is_bias=True)

    def forward(self, x):
        return FusedBiasGelu.apply(self.fc(x), self.bias) * 2.0


INPUTS = [([3, 4], "float32", True)]
