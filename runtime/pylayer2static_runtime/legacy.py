"""Adapter for the legacy Program IR (paddle 2.6, `paddle.static.Variable` tensors).

Read from paddle 2.6.2: python/paddle/static/nn/static_pylayer.py (`static_pylayer`:
forward and backward sub-blocks, backward outputs renamed to `<input>@GRAD`, the
temporary variables of `StaticPyLayerContext.saved_tensor` removed from the backward
block once it is complete) and python/paddle/jit/dy2static/py_layer.py (saved
variables are re-declared by name in the backward block; at run time the backward
block finds them in the forward block's step scope).
"""
from typing import Any, List, Tuple

import paddle
from paddle.base.framework import Variable  # paddle 2.6.2 (also 3.3.1 with PIR off)


class LegacyAdapter:
    """Per-op glue between `PyLayerOp` and the Program IR's `static_pylayer`."""

    name = "legacy"

    def __init__(self) -> None:
        self._saved: List[Any] = []
        self._declared: List[Tuple[Any, str]] = []

    @staticmethod
    def is_tensor(value: Any) -> bool:
        return isinstance(value, Variable)

    def save(self, values: List[Any]) -> None:
        """Called at the end of forward: remember the forward-block variables."""
        self._saved = list(values)

    def restore(self, count: int) -> List[Any]:
        """Declare same-named variables in the backward block (one per saved variable)."""
        block = paddle.static.default_main_program().current_block()
        values = []
        for var in self._saved[:count]:
            if not block.has_var(var.name):
                self._declared.append((block, var.name))
            values.append(
                block.create_var(name=var.name, dtype=var.dtype, shape=var.shape, type=var.type)
            )
        return values

    def outputs_as_list(self, result: Any, count: int) -> List[Any]:
        return list(result) if result is not None else []

    def finish(self) -> None:
        """Remove the backward block's stand-ins, as the framework does for its own context."""
        for block, name in self._declared:
            if block.has_var(name):
                block._remove_var(name)
        if self._declared:
            self._declared[0][0].program._sync_with_cpp()
        self._declared = []
