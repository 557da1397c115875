"""recompute reached through `fleet`: a use in a method body, and one through an import made in
the function itself."""
import paddle; import pylayer2static_runtime as _p2s
from paddle.distributed import fleet


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.block = paddle.nn.Linear(4, 4)

    def forward(self, x):
        return fleet.utils.recompute(self.block, x)


def segments(functions, x):
    from paddle.distributed import fleet as f

    return f.recompute.recompute_sequential({"segments": 2}, functions, x)
