"""Correct code near every check: none of them may fire here."""
import paddle
from paddle.autograd import PyLayer


class Split(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.split(x, 2)

    @staticmethod
    def backward(ctx, d1, d2):
        return paddle.concat([d1, d2])


class WithFunc(PyLayer):
    @staticmethod
    def forward(ctx, x, scale, fn=paddle.tanh):
        ctx.scale = scale
        ctx.save_for_backward(x)
        rows = int(x.shape[0])
        return fn(x) * float(scale) * rows, scale + 1.0

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.scale


class Branches(PyLayer):
    @staticmethod
    def forward(ctx, x, flag):
        if flag:
            ctx.save_for_backward(x)
        else:
            ctx.save_for_backward(x * 2.0)
        return x * 3.0

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 3.0, None


def _save(ctx, x):
    ctx.save_for_backward(x)


class Helper(PyLayer):
    @staticmethod
    def forward(ctx, x):
        _save(ctx, x)
        return x * 1.0

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy


class Base(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0


class Child(Base):
    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Varargs(PyLayer):
    @staticmethod
    def forward(ctx, x, *xs, **opts):
        return x * 1.0

    @staticmethod
    def backward(ctx, *grads):
        return grads


class NoInputs(PyLayer):
    @staticmethod
    def forward(ctx):
        return paddle.ones([1])

    @staticmethod
    def backward(ctx, dy):
        return None


class Table:
    def apply(self, f):
        return f(self)


a = Split.apply(paddle.ones([4]))
b = WithFunc.apply(paddle.ones([2]), 2.0)
args = (paddle.ones([2]),)
c = WithFunc.apply(*args, 2.0, fn=paddle.exp)
d = Branches.apply(paddle.ones([2]), True)
e = Helper.apply(paddle.ones([2]))
f = Child.apply(paddle.ones([2]))
g = Varargs.apply(paddle.ones([2]), paddle.ones([2]), mode="x")
h = NoInputs.apply()
t = Table().apply(len)
