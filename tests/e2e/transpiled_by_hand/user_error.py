"""A PyLayer whose forward raises: the traceback must point at the raising line."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer


def check_positive(x):
    raise ValueError("user error in forward")  # the line the traceback must name


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x):
        check_positive(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Model(paddle.nn.Layer):
    def forward(self, x):
        return _p2s.apply(Scale, x)


INPUTS = [([2, 4], "float32", True)]


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above) ---
_p2s.require("0.1.0")


@_p2s.register(Scale)
def _p2s_static_Scale(x):
    """Scale.apply in a static graph: one `pylayer` op."""
    op = _p2s.PyLayerOp(Scale, (x,), {})
    return op.build(forward=Scale.forward, backward=Scale.backward)
# pylayer2static 0.1.0
