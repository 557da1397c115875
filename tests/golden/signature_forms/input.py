import paddle
import paddle.autograd as ag


class Many(ag.PyLayer):
    @staticmethod
    def forward(ctx, x, /, y: paddle.Tensor, *rest, scale=2.0, mode: str = "a", **extra):
        return x * scale

    @staticmethod
    def backward(ctx, g):
        return g


class KwOnly(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x, *, alpha):
        return x * alpha

    @staticmethod
    def backward(ctx, g):
        return g


class NoArgs(paddle.autograd.py_layer.PyLayer):
    @staticmethod
    def forward(ctx):
        return paddle.ones([1])

    @staticmethod
    def backward(ctx):
        return None


z = Many.apply(paddle.ones([2]), paddle.ones([2]), 3, scale=1.0)
w = KwOnly.apply(z, alpha=0.5)
n = NoArgs.apply()
