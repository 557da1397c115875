import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


class Act(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


act = _p2s.applier(Act)
Alias = Act
outs = [_p2s.apply(Alias, t) for t in [paddle.ones([1])]]
handler = {"act": _p2s.applier(Act)}
r = _p2s.apply((Act
     ), 
    paddle.ones([1]),  # arguments keep their lines
)
Act.apply = _p2s.applier(Act)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")


@_p2s.register(Act)
def _p2s_static_Act(x):
    """Act.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Act, (x,), {})
    return op.build(forward=Act.forward, backward=Act.backward)
# pylayer2static 0.1.0
