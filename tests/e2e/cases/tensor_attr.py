"""`ctx.attr = tensor` in forward, read in backward; save_for_backward of a nested structure."""
import paddle
from paddle.autograd import PyLayer


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x, w):
        ctx.x = x
        ctx.factor = 3.0
        ctx.save_for_backward([x, w], {"w2": w * w})
        return x * x * x * w

    @staticmethod
    def backward(ctx, dy):
        (x, w), extra = ctx.saved_tensor()
        dx = dy * ctx.factor * ctx.x * ctx.x * w
        dw = dy * x * x * x + 0.0 * extra["w2"]
        return dx, dw


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x, w):
        return Cube.apply(self.linear(x), w)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True)]
