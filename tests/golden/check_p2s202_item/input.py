import paddle
from paddle.autograd import PyLayer


class Clip(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.max().item() > 1.0:
            return paddle.clip(x, max=1.0)
        return x * 1.0

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * paddle.cast(x <= 1.0, dy.dtype)


out = Clip.apply(paddle.ones([2]))
