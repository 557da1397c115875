# The first import binds the function the runtime replaces: the runtime import goes before it,
# so `ckpt` is the runtime's recompute.
from paddle.distributed.fleet.recompute import recompute as ckpt
import paddle


def run(layer, x):
    return ckpt(layer, x)
