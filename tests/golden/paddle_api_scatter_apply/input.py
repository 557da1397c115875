"""Paddle's own sequence-parallel PyLayers: their `.apply` stays as written (the runtime
dispatches it), and the module gets the runtime import."""
import paddle
from paddle.distributed.fleet.utils import sequence_parallel_utils as spu
from paddle.distributed.fleet.utils.sequence_parallel_utils import ScatterOp


def shard(x):
    y = ScatterOp.apply(x)
    return spu.GatherOp.apply(paddle.nn.functional.relu(y))
