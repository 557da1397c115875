"""Adapter for the PIR (paddle 3.x, `paddle.pir.Value` tensors).

Read from paddle 3.3.1: python/paddle/static/nn/static_pylayer.py (`static_pylayer`
PIR branch: `build_pylayer_op`, outputs flattened and a single output unwrapped,
backward registered as a callable that PIR turns into a block at autodiff time)
and python/paddle/jit/dy2static/py_layer.py (`StaticPyLayerContext`: saved tensors
cross with `build_pipe_for_pylayer` in the forward block and are read back from the
`cf.tuple_pop` op of the backward block).
"""
import contextlib
from typing import Any, Callable, Iterator, List, Optional

import paddle
from paddle.base.libpaddle.pir import build_pipe_for_pylayer  # paddle 3.3.1

from .errors import PyLayerContractError


class PirAdapter:
    """Per-op glue between `PyLayerOp` and PIR's `static_pylayer`."""

    backward_built_with_forward = False
    name = "pir"

    @staticmethod
    def is_tensor(value: Any) -> bool:
        return isinstance(value, paddle.pir.Value)

    @staticmethod
    def grad_enabled() -> bool:
        """Whether the op is built where gradients are recorded (not under `paddle.no_grad`)."""
        return paddle.is_grad_enabled()

    @staticmethod
    def op_inputs(values: List[Any]) -> List[Any]:
        """The op's inputs: the values themselves."""
        return values

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

    @staticmethod
    def forward_only_backward(message: str, inputs: List[Any], needs_grad: bool) -> Optional[Callable[..., Any]]:
        """The backward of a PyLayer without one: PIR calls it only when autodiff asks for
        a gradient through the op, and then it raises `message`, as eager raises in backward."""
        if all(value.stop_gradient for value in inputs):
            return None  # `static_pylayer` accepts no backward only for such inputs
        if not needs_grad:
            # Applied under paddle.no_grad(): the outputs stop gradient, so no gradient flows
            # through the op. paddle 3.2+ autodiff then leaves the op alone; 3.0.0 and 3.1.1
            # (python/paddle/autograd/ir_backward.py) still call its backward, which gives
            # none, as eager does.
            def no_gradient(*grads: Any) -> List[Any]:
                return [None] * len(inputs)

            return no_gradient

        def no_backward(*grads: Any) -> List[Any]:
            raise PyLayerContractError(message)

        return no_backward

    @staticmethod
    @contextlib.contextmanager
    def backward_semantics() -> Iterator[None]:
        """While backward's sub-block is built, `detach()` makes a copy.

        In paddle 3.3.1 PIR, `y = x.detach(); y.stop_gradient = False; paddle.grad(f(y), y)`
        drops every path through `y` but the last (`share_data_`, the op `detach` builds, is
        an in-place op to autodiff; with `f(y) = tanh(y) * y` only `tanh(y) * dy` comes out),
        also at the top of a to_static program, silently. That is how recompute PyLayers
        (re-run forward in backward, `paddle.grad` of it) are written, so their gradients
        would be wrong. A copy that stops gradient has the same values and none of that.
        """
        detach = paddle.pir.Value.detach

        def detached_copy(value: Any) -> Any:
            copy = paddle.assign(value)
            copy.stop_gradient = True
            return copy

        paddle.pir.Value.detach = detached_copy
        try:
            yield
        finally:
            paddle.pir.Value.detach = detach

    def finish(self) -> None:
        """Nothing to clean up in PIR."""
