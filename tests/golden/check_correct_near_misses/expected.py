"""Correct code near every check: none of them may fire here."""
import paddle; import pylayer2static_runtime as _p2s
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


a = _p2s.apply(Split, paddle.ones([4]))
b = _p2s.apply(WithFunc, paddle.ones([2]), 2.0)
args = (paddle.ones([2]),)
c = _p2s.apply(WithFunc, *args, 2.0, fn=paddle.exp)
d = _p2s.apply(Branches, paddle.ones([2]), True)
e = _p2s.apply(Helper, paddle.ones([2]))
f = _p2s.apply(Child, paddle.ones([2]))
g = _p2s.apply(Varargs, paddle.ones([2]), paddle.ones([2]), mode="x")
h = _p2s.apply(NoInputs)
t = Table().apply(len)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Split)
def _p2s_static_Split(x):
    """Split.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Split, (x,), {})
    return op.build(forward=Split.forward, backward=Split.backward)


@_p2s.register(WithFunc)
def _p2s_static_WithFunc(x, scale, fn=_p2s.DEFAULT):
    """WithFunc.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(WithFunc, (x, scale, fn), {})
    return op.build(forward=WithFunc.forward, backward=WithFunc.backward)


@_p2s.register(Branches)
def _p2s_static_Branches(x, flag):
    """Branches.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Branches, (x, flag), {})
    return op.build(forward=Branches.forward, backward=Branches.backward)


@_p2s.register(Helper)
def _p2s_static_Helper(x):
    """Helper.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Helper, (x,), {})
    return op.build(forward=Helper.forward, backward=Helper.backward)


@_p2s.register(Base)
def _p2s_static_Base(x):
    """Base.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Base, (x,), {})
    return op.build(forward=Base.forward, backward=Base.backward)


@_p2s.register(Child)
def _p2s_static_Child(x):
    """Child.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Child, (x,), {})
    return op.build(forward=Child.forward, backward=Child.backward)


@_p2s.register(Varargs)
def _p2s_static_Varargs(x, *xs, **opts):
    """Varargs.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Varargs, (x, *xs), {**opts})
    return op.build(forward=Varargs.forward, backward=Varargs.backward)


@_p2s.register(NoInputs)
def _p2s_static_NoInputs():
    """NoInputs.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(NoInputs, (), {})
    return op.build(forward=NoInputs.forward, backward=NoInputs.backward)
# pylayer2static 0.1.0
