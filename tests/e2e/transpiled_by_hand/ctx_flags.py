"""mark_non_differentiable, set_materialize_grads(False), mark_not_inplace."""
import paddle; import pylayer2static_runtime as _p2s
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
        a, sign = _p2s.apply(SplitSign, h)
        u, _unused = _p2s.apply(Unmaterialized, h)
        return a + _p2s.apply(Identity, h) + u, sign


INPUTS = [([2, 4], "float32", True)]

# paddle 2.6.2's jit.save (static/io.py normalize_program) pops each pylayer op's
# backward block from the program by a stale index: with two or more pylayer ops it
# fails (IndexError) or exports a broken model, with the framework's own path too.
MODES_2_6 = ("eager", "to_static", "sot", "static", "train")


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(SplitSign)
def _p2s_static_SplitSign(x):
    """SplitSign.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(SplitSign, (x,), {})
    return op.build(forward=SplitSign.forward, backward=SplitSign.backward)


@_p2s.register(Unmaterialized)
def _p2s_static_Unmaterialized(x):
    """Unmaterialized.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Unmaterialized, (x,), {})
    return op.build(forward=Unmaterialized.forward, backward=Unmaterialized.backward)


@_p2s.register(Identity)
def _p2s_static_Identity(x):
    """Identity.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Identity, (x,), {})
    return op.build(forward=Identity.forward, backward=Identity.backward)
# pylayer2static 0.1.0
