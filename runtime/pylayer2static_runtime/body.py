"""The framework as a PyLayer's op and its bodies are built: what eager's semantics need of it.

Each piece swaps framework state for the length of a body (through `patch.swapped`) and is
the same for both IRs; what differs by IR comes from the `adapter.IrAdapter` it is given.
`op.py` builds with these and imports no framework code of its own:
- `converted_code_semantics`: converted code follows in-place writes, also in a pure static
  program, and leaves the IR's in-place map (`adapter.inplace_map`) as it found it;
- `eager_forward_grad_mode`, `eager_backward_grad_mode`: forward and backward are built with
  grad mode off, as eager runs them, unless they turn it on (the mode lives in the build
  scope, `core/scope.py`);
- `no_autograd_backward`: `paddle.autograd.backward` in a backward is a contract error;
- `body_rules`: in-place APIs followed (`inplace.py`), eager-only code refused (`eager_only.py`),
  the ops' call stacks the user's (`frames.user_callstack`);
- `as_static`, `cast`, `defines_backward`: the framework calls the build steps make.
"""
import contextlib
from typing import Any, Callable, Iterator, List

import paddle
from paddle.base.dygraph.base import _convert_into_variable

from . import eager_only, frames, inplace, patch
from .adapter import IrAdapter
from .core import scope
from .core.errors import contract_error


@contextlib.contextmanager
def converted_code_semantics(adapter: IrAdapter) -> Iterator[None]:
    """Run converted forward/backward code as dy2static does, also in a pure static program.

    Outside to_static, converted code does not follow in-place writes (`out[i:j] = x`):
    paddle 3.3.1 `convert_load` consults the in-place map only in to_static mode, so a
    later `out` reads the tensor before the write (wrong values, no error), and paddle
    2.6.2 `Variable.__setitem__` refuses outside it. Both read the flag
    `global_var._in_to_static_mode_` (paddle/base/dygraph/base.py).

    The IR's in-place map (`adapter.inplace_map`) is left as the body found it, under
    to_static too: converted code and the in-place APIs (inplace.py) record there while
    forward/backward is built, and a pure static program's entries, or a backward's built at
    autodiff time after dy2static popped the program's records, would outlive the program;
    a later program given the same id would read values of the freed one (3.0.0-3.2.2: a
    segfault in DenseTensorArrayType::classof, or `can only get shape for dense` errors).
    A body's code records in its own IR's map only (paddle 3.3.1 `variable_index.py` and
    `convert_operators.py` pick the map by `in_pir_mode`/`use_pir_api`).
    """
    from paddle.base.dygraph import base

    recorded = adapter.inplace_map()
    checkpoint = recorded.save_checkpoint()
    try:
        with patch.swapped("body.in_to_static_mode", base.global_var, "_in_to_static_mode_", True):
            yield
    finally:
        recorded.restore_checkpoint(checkpoint)


def as_static(value: Any) -> Any:
    """An eager tensor in the call (a layer's parameter or buffer, as `*self.parameters()`
    passes them under to_static) as the program's variable, as dy2static converts one when
    an op reads it (paddle 3.3.1 and 2.6.2 `paddle.base.dygraph.base._convert_into_variable`);
    eager gives it a gradient slot like any tensor argument."""
    if isinstance(value, paddle.Tensor):
        return _convert_into_variable(value)
    return value


@contextlib.contextmanager
def eager_forward_grad_mode(adapter: IrAdapter) -> Iterator[None]:
    """Build forward with grad mode off, as eager runs it, unless it turns it on.

    Eager calls forward with grad mode off (paddle 3.3.1 and 2.6.2
    paddle/fluid/pybind/eager_py_layer.cc `pylayer_method_apply`: `egr::AutogradMeta`-free
    outputs, `paddle.is_grad_enabled()` False there): every tensor forward's own ops make
    reads `stop_gradient=True`, while its arguments keep theirs. Code that decides what to
    compute by reading it (PaddleNLP's FusedHeadAndCrossEntropy computes the hidden states'
    gradient in forward only when `hidden_states.reshape(...).stop_gradient`, always in
    eager) would otherwise take the other branch, silently. `no_grad`, `enable_grad` and
    `set_grad_enabled` go through `is_grad_enabled`/`_set_grad_enabled` of
    paddle/base/dygraph/base.py, swapped here; how a value made with the mode off stops
    gradient is the IR's (`adapter.forward_grad_mode`: PIR's own flag, set as the mode is, the
    Program IR's ops marked). The mode is restored after forward, so the ops outside it are
    built as before.
    """
    from paddle.base.dygraph import base

    with adapter.forward_grad_mode(lambda: scope.current().forward_mode is False) as set_framework_mode:
        def set_mode(mode: Any) -> None:
            scope.update(forward_mode=bool(mode))
            set_framework_mode(bool(mode))

        with scope.entered(forward_mode=False), \
                patch.swapped("body.is_grad_enabled", base, "is_grad_enabled", lambda: bool(scope.current().forward_mode)), \
                patch.swapped("body.set_grad_enabled", base, "_set_grad_enabled", set_mode):
            yield


class _BackwardEntry:
    """The grad mode at the top of a backward being built: off, as eager runs backward.

    Falsy for whoever reads the mode; when `no_grad`/`enable_grad` restore it on exit, the
    framework's own flag goes back to what it was outside, so the ops of backward's own
    code are built as they were (a gradient of them, as a double backward asks, is then
    refused by the framework as before, not silently none).
    """

    def __bool__(self) -> bool:
        return False


@contextlib.contextmanager
def eager_backward_grad_mode() -> Iterator[None]:
    """Build backward with grad mode off, as eager runs it, unless it turns it on.

    Eager runs backward with grad mode off; a recompute PyLayer turns it on
    (`with paddle.enable_grad():`) to re-run forward and `paddle.grad` it, and a PyLayer
    applied there then records its own backward. `no_grad`, `enable_grad` and
    `set_grad_enabled` read and set the mode through `is_grad_enabled` and
    `_set_grad_enabled` of paddle/base/dygraph/base.py (paddle 3.3.1 and 2.6.2); in a static
    program paddle 2.6.2 keeps no mode at all, so the mode is tracked here, and set in the
    framework too inside those blocks (PIR builds ops by it).
    """
    from paddle.base.dygraph import base

    is_grad_enabled, set_grad_enabled = base.is_grad_enabled, base._set_grad_enabled
    outer_mode = is_grad_enabled()
    entry = _BackwardEntry()

    def set_mode(mode: Any) -> None:
        scope.update(backward_mode=mode if mode is entry else bool(mode))
        set_grad_enabled(outer_mode if mode is entry else mode)

    try:
        with scope.entered(backward_mode=entry), \
                patch.swapped("body.is_grad_enabled", base, "is_grad_enabled", lambda: scope.current().backward_mode), \
                patch.swapped("body.set_grad_enabled", base, "_set_grad_enabled", set_mode):
            yield
    finally:
        set_grad_enabled(outer_mode)


@paddle.jit.not_to_static
def _refused_autograd_backward(*args: Any, **kwargs: Any) -> None:
    built = scope.current().body  # swapped in only around a backward's body (`op.py`)
    raise contract_error(
        built.cls,
        "backward calls paddle.autograd.backward, which accumulates into .grad and works in "
        "dynamic graphs only; return paddle.grad(outputs, inputs, grads) instead, passing "
        "the parameters to apply as arguments to get their gradients too (as "
        "CheckpointFunction-style recompute does)",
        "backward",
    )


@contextlib.contextmanager
def no_autograd_backward() -> Iterator[None]:
    """While backward is built, `paddle.autograd.backward` raises a contract error naming the
    class of the body in scope.

    Eager's accumulates into `.grad` of leaves, which no static graph has (paddle 3.3.1 and
    2.6.2 raise "We only support 'backward()' in dynamic graph mode", without the PyLayer);
    a backward can return `paddle.grad` of the re-run outputs instead, with the parameters
    passed to `apply` as arguments so that their gradients are returned too.
    """
    with patch.swapped("body.autograd_backward", paddle.autograd, "backward", _refused_autograd_backward):
        yield


@contextlib.contextmanager
def body_rules(cls: type, method: str, adapter: IrAdapter, foreign: List[Any]) -> Iterator[None]:
    """What forward's and backward's bodies alike are built under: the IR's own
    (`adapter.body_semantics`), in-place APIs followed (`foreign`: what forward may not
    write into, inplace.py) and eager-only code refused at the user's line (eager_only.py).
    Once built, the body's ops carry the user's call stack (`frames.user_callstack`, which the
    adapter gives them), so an op that fails when the program runs names the user's line and
    the class."""
    with adapter.body_semantics(method, lambda callstack: frames.user_callstack(callstack, cls, method)), \
            inplace.followed(scope.Body(cls, method, foreign, adapter)), eager_only.guarded():
        yield


def is_eager_tensor(value: Any) -> bool:
    """Whether `value` is an eager tensor (a layer's parameter passed to apply under to_static)."""
    return isinstance(value, paddle.Tensor)


def in_to_static() -> bool:
    """Whether the program is built by to_static (AST or SOT), not by the user's static code."""
    from paddle.base.dygraph.base import in_to_static_mode

    return scope.current().sot_recording or in_to_static_mode()


def cast(value: Any, dtype: Any) -> Any:
    return paddle.cast(value, dtype)


def defines_backward(backward: Callable[..., Any]) -> bool:
    """Whether `backward` is a class's own, not `PyLayer.backward` (which raises)."""
    return backward is not paddle.autograd.PyLayer.backward


def read_after(values: List[Any], after: List[Any]) -> List[Any]:
    """`values` (tensors of the block being built), each read only once the tensors `after`
    exist (none: as they are), so an executor cannot start the ops reading them earlier.

    Each becomes `x - 0` (`x | False` for bool), the zero made from a one-element slice of
    each of `after` by `zeros_like`, which reads no number of theirs (inf, NaN): `x` keeps its
    bits, sign of zero included. Neither IR has a dependency-only op that runs here (paddle
    3.3.1 and 2.6.2 `depend` require the output to be the input variable itself, which a new
    PIR value never is and a sub-block's re-declared variable is not), and one elementwise
    pass over a saved tensor is a small part of what a backward that re-runs forward computes.
    The zero stops gradient: a `paddle.grad` in backward would otherwise follow it into the
    gradient ops that made `after`.
    """
    if not after:
        return list(values)
    zero = None
    for value in after:
        first = paddle.slice(paddle.flatten(value), axes=[0], starts=[0], ends=[1])
        part = paddle.sum(paddle.zeros_like(first))
        zero = part if zero is None else zero + part
    zero.stop_gradient = True
    gated = []
    for value in values:
        if value.dtype == paddle.bool:
            out = paddle.logical_or(value, paddle.cast(zero, paddle.bool))
        else:
            out = value - paddle.cast(zero, value.dtype)
        out.stop_gradient = value.stop_gradient
        gated.append(out)
    return gated
