"""forward(ctx, x, *xs) applied to three tensors that need gradients; backward returns two
(issue 11 items 2 and 3, broken on purpose): eager leaves out only trailing arguments that
stop gradient."""
import paddle
from paddle.autograd import PyLayer


class Total(PyLayer):
    @staticmethod
    def forward(ctx, x, *xs):
        ctx.count = len(xs)
        out = x
        for v in xs:
            out = out + v
        return out

    @staticmethod
    def backward(ctx, dy):
        return tuple(dy for _ in range(ctx.count))


class Model(paddle.nn.Layer):
    def forward(self, x):
        return Total.apply(x, x * 2.0, x * 3.0)


INPUTS = [([2, 4], "float32", True)]
