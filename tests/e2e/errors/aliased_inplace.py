"""A forward that returns its input as it is (a residual passed through), after which the model
writes that input in place (a slot reset, `h[0] = 0.0`). Eager's output is the input tensor
itself (`kept is h`), so the write changes `kept` too; a static graph's output is a tensor of
its own. Refused, naming the class and its forward, under to_static and at export, on both IRs
(inline.py and legacy.py `refuse_aliased_writes`)."""
import paddle
from paddle.autograd import PyLayer


class PassThroughScale(PyLayer):
    @staticmethod
    def forward(ctx, residual, x):
        return residual, x * 2.0

    @staticmethod
    def backward(ctx, d_residual, dy):
        return d_residual, dy * 2.0


class Product(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensor()
        return dy * b, dy * a


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 4)

    def forward(self, x):
        h = self.linear(x)
        kept, y = PassThroughScale.apply(h, x)
        h[0] = 0.0
        return kept + Product.apply(y, y), h


INPUTS = [([3, 4], "float32", True)]
