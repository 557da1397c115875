"""mark_non_differentiable, set_materialize_grads(False), mark_not_inplace."""
import paddle
from paddle.autograd import PyLayer


class SplitSign(PyLayer):
    @staticmethod
    def forward(ctx, x):
        sign = paddle.sign(x)
        ctx.mark_non_differentiable(sign)
        ctx.save_for_backward(sign)
        return x * sign, sign

    @staticmethod
    def backward(ctx, dy, dsign):
        sign, = ctx.saved_tensor()
        return dy * sign + dsign


class Unmaterialized(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx, da, db):
        grad = paddle.zeros_like(da) if da is not None else None
        if da is not None:
            grad = grad + da * 2.0
        if db is not None:
            grad = grad + db * 3.0
        return grad


class Identity(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_not_inplace(x)
        return x

    @staticmethod
    def backward(ctx, dy):
        return dy


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        a, sign = SplitSign.apply(h)
        u, _unused = Unmaterialized.apply(h)
        return a + Identity.apply(h) + u, sign


INPUTS = [([2, 4], "float32", True)]
