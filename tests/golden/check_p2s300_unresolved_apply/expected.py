import paddle; import pylayer2static_runtime as _p2s
from paddle.autograd import PyLayer

from .ops import GatherOp


def gather(x, index):
    return _p2s.apply(GatherOp, x, index)


# --- pylayer2static 0.1.0: static-graph builders (generated; edit the classes above instead) ---
_p2s.require("0.1.0")
# pylayer2static 0.1.0
