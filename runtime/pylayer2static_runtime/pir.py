"""Adapter for the PIR (paddle 3.x, `paddle.pir.Value` tensors).

Read from paddle 3.3.1: python/paddle/static/nn/static_pylayer.py (`static_pylayer`
PIR branch: `build_pylayer_op`, outputs flattened and a single output unwrapped,
backward registered as a callable that PIR turns into a block at autodiff time)
and python/paddle/jit/dy2static/py_layer.py (`StaticPyLayerContext`: saved tensors
cross with `build_pipe_for_pylayer` in the forward block and are read back from the
`cf.tuple_pop` op of the backward block).
"""
from typing import Any, List

import paddle
from paddle.base.libpaddle.pir import build_pipe_for_pylayer  # paddle 3.3.1


class PirAdapter:
    """Per-op glue between `PyLayerOp` and PIR's `static_pylayer`."""

    name = "pir"

    @staticmethod
    def is_tensor(value: Any) -> bool:
        return isinstance(value, paddle.pir.Value)

    def save(self, values: List[Any]) -> None:
        """Called at the end of forward, inside the forward block."""
        if values:
            block = paddle.pir.get_current_insertion_point().block()
            build_pipe_for_pylayer(block, values)

    def restore(self, count: int) -> List[Any]:
        """Called at the start of backward: the backward block's view of the saved values."""
        if count == 0:
            return []
        block = paddle.pir.get_current_insertion_point().block()
        values: List[Any] = []
        for op in block.ops:
            if op.name() == "cf.tuple_pop":
                values = op.as_tuple_pop_op().pop_all_values()
        if len(values) != count:
            raise RuntimeError(
                f"pylayer2static: expected {count} saved values in the backward block, found {len(values)}"
            )
        return list(values)

    def outputs_as_list(self, result: Any, count: int) -> List[Any]:
        """Undo `static_pylayer`'s unwrapping of a single output."""
        if count == 1:
            return [result]
        return list(result) if result is not None else []

    def finish(self) -> None:
        """Nothing to clean up in PIR."""
