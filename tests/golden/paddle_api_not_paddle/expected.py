"""No Paddle API: a recompute of another library, an attribute and a string named like one,
Paddle's recompute module itself (no use of its names), and a star import, which is not
followed. The file comes back byte for byte."""
import paddle.distributed.fleet.recompute
from mylib.checkpoint import recompute
from paddle.distributed.fleet.utils import *


def run(self, layer, x):
    if self.recompute and getattr(layer, "recompute", None):
        return recompute(layer, x)
    return paddle.distributed.fleet.recompute
