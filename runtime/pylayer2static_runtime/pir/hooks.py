"""Where PIR programs meet the framework: every process-wide PIR patch, made by `install` (paddle 3.x).

Pylayer ops are inlined (`ops.py`) where programs are handed to an executor or exported:
- to_static training: `PartialProgramLayer._append_backward` (paddle 3.3.1
  jit/dy2static/pir_partial_program.py; `_append_backward_desc` in 3.0.0) returns the program
  with its gradient ops, before it is split into the forward and backward programs; values are
  known there by name and the split finds its boundaries by marker ops, which inlining keeps
  (it removes only pylayer ops, pipe ops and yields). Before autodiff, a loaded export's calls
  are built again (`reload.py`) and what stays inlined, or writes in place what a forward
  returned as it is, is refused;
- to_static inference (`model.eval()`): the `after_infer` hook of the same class;
- pure static programs: the executor's copy of the program, once fetch ops are added
  (paddle 3.3.1 base/executor.py `_get_pir_program_and_executor`): the user's program keeps
  its pylayer ops, so a later `paddle.static.gradients` still sees backward's ops;
- exports: the program `normalize_pir_program` (static/pir_io.py) makes for
  `save_inference_model` and `jit.save`, once its feed and fetch ops are added, its calls
  recorded (`export.py`);
- a PyLayer's gradient: the pylayer op autodiff builds for it (`core.call_vjp`), as it is
  built (`double_backward.py`).

And autodiff: a parameter a backward gives no gradient gets None, not a null value
(`_gradients_as_none`), and a to_static program's values are listed without a reference cycle
that kept them past their program (`_program_all_values`, docs/RELIABILITY.md).
"""
import functools
import logging
from typing import Any, Callable, Iterator, List

from .. import patch
from ..core.errors import PyLayerContractError
from ..core.records import SUFFIX
from ..inplace import followers_installed
from . import double_backward, export
from .ops import MARK, forget_values, inline_pylayers, refuse_aliased_writes
from .reload import rebuild_calls
from .unused import drop_unused

LOG = logging.getLogger("pylayer2static_runtime")


def _inline_and_drop(program: Any) -> int:
    """Inline `program`'s pylayer ops, then drop the ops of PyLayer backwards whose results
    nothing uses (`unused.drop_unused`); the number of ops inlined and dropped."""
    return inline_pylayers(program) + drop_unused(program)


def _inline_runnable(runnable: Any) -> None:
    """Inline a dy2static `RunnableProgram`'s pylayer ops and drop its unused backward ops,
    forgetting the values it looked up."""
    if _inline_and_drop(runnable.program):
        forget_values(runnable)


def _struct_names(block: Any) -> Iterator[str]:
    for op in block.ops:
        if op.has_attr("struct_name"):
            yield op.str_attr("struct_name")
        for inner in op.blocks():
            yield from _struct_names(inner)


def _inlined_classes(program: Any) -> List[str]:
    """The PyLayer classes whose ops `program` holds inlined, before any autodiff, also
    inside control flow."""
    paths = _struct_names(program.global_block())
    return sorted({part[len(MARK):] for path in paths for part in path.split("/") if part.startswith(MARK)})


def _refuse_inlined_training(runnable: Any) -> None:
    """A program `jit.save` exported with PyLayers inlined holds their forward ops only:
    autodiff would differentiate those, not the custom backward (a straight-through
    quantizer's gradient would be round's, zero). Loud, naming the classes."""
    classes = _inlined_classes(runnable.program)
    if classes:
        raise PyLayerContractError(
            f"this program was saved by paddle.jit.save with the forward of PyLayer {', '.join(classes)} "
            "inlined for inference (pylayer2static); its custom backward is not in the file, and the "
            f"record of its calls that pylayer2static writes beside it (PREFIX{SUFFIX}) was not "
            "loaded with it or does not cover these calls (inside control flow), so the loaded model "
            "cannot be trained or run in training mode: call .eval() on it for inference, and train "
            "the original model"
        )


def _after_append_backward(append_backward: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(append_backward)
    def append_backward_and_inline(self: Any, *args: Any, **kwargs: Any) -> Any:
        training = args[0] if args else kwargs["train_runnable_program"]
        rebuild_calls(training)
        _refuse_inlined_training(training)
        refuse_aliased_writes(training.program.global_block())
        with followers_installed():  # once for every PyLayer backward autodiff builds
            runnable = append_backward(self, *args, **kwargs)
        _inline_runnable(runnable)
        return runnable

    return append_backward_and_inline


def _inlining_infer_hook(hook_base: type) -> type:
    class InlineOnInfer(hook_base):  # type: ignore[misc, valid-type]
        """`after_infer`: the inference program with its pylayer ops inlined."""

        def after_infer(self, infer_program: Any) -> Any:
            refuse_aliased_writes(infer_program.program.global_block())
            _inline_runnable(infer_program)
            infer_program.forward_range = (0, len(infer_program.program.global_block().ops))
            return infer_program

    return InlineOnInfer


def _with_infer_hook(init: Callable[..., Any], hook: type) -> Callable[..., Any]:
    @functools.wraps(init)
    def init_with_hook(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.add_hooker(hook())

    return init_with_hook


def _then_inline(
    make: Callable[..., Any], program_at: Callable[..., Any], inlining: Callable[[Any], int] = inline_pylayers
) -> Callable[..., Any]:
    """`make`, then the pylayer ops of the program `program_at(args, result)` inlined."""

    @functools.wraps(make)
    def make_and_inline(*args: Any, **kwargs: Any) -> Any:
        result = make(*args, **kwargs)
        inlining(program_at(args, kwargs, result))
        return result

    return make_and_inline


def _no_gradient_as_none(grad: Any) -> Any:
    return grad if grad is None or grad.initialized() else None


def _gradients_as_none(compute: Callable[..., Any], pairs: bool) -> Callable[..., Any]:
    """`compute` (`ir_backward.grad`, `append_backward`) giving None for a null gradient.

    A backward that returns None for a trainable parameter (a LoRA layer in its merged,
    inference form) leaves a null value as that parameter's gradient in paddle 3.3.1
    `paddle.autograd.ir_backward` `grad` and `append_backward`, where the optimizer skips
    only a gradient that is None (optimizer.py `backward`, `_pir_create_optimization_pass`):
    `sgd_` then fails on the null value. Eager leaves such a parameter's `.grad` None and
    skips it; so does the framework for a parameter no path reaches.
    """
    @functools.wraps(compute)
    def none_for_no_gradient(*args: Any, **kwargs: Any) -> Any:
        with followers_installed():  # once for every PyLayer backward autodiff builds
            result = compute(*args, **kwargs)
        if pairs:
            return [(param, _no_gradient_as_none(grad)) for param, grad in result]
        return [_no_gradient_as_none(grad) for grad in result]

    return none_for_no_gradient


def _extend_values(block: Any, values: List[Any]) -> None:
    values.extend(block.kwargs().values())
    for op in block.ops:
        values.extend(op.results())
        for inner in op.blocks():
            _extend_values(inner, values)


def _program_all_values(program: Any) -> List[Any]:
    """Every value of `program`, as paddle 3.3.1 `RunnableProgram._get_program_all_values`
    lists them (a block's keyword arguments, then each op's results and its blocks', depth
    first), without the reference cycle its nested function makes.

    That cycle (`extend_values` calls itself through its closure, whose other cell holds the
    list) keeps the list alive until the cyclic garbage collector runs, and the list holds the
    `Block.kwargs()` values, which paddle binds by reference (paddle/fluid/pybind/pir.cc:
    Python objects that point into the block and own nothing, registered by pybind11 under
    that address). Once the program is freed (a to_static function dropped) and before a
    collection, pybind11 hands such a stale object back in place of a fresh copy whenever a
    temporary C++ value lands at its address (`get_used_external_value`, `operands_source`),
    and it then reads freed memory: the segfault in PIR autodiff of docs/RELIABILITY.md, seen
    with the framework's own path too. Listed here, the values go when the caller drops them.
    """
    values: List[Any] = []
    _extend_values(program.global_block(), values)
    return values


def install() -> None:
    """Every PIR patch of the module docstring, and the export's (`export.install`)."""
    from paddle.autograd import ir_backward
    from paddle.base import core, executor
    from paddle.jit.dy2static import pir_partial_program
    from paddle.jit.dy2static.pir_partial_program import RunnableProgram
    from paddle.static import io, pir_io

    layer = pir_partial_program.PartialProgramLayer
    hook = _inlining_infer_hook(pir_partial_program.PartialProgramLayerHook)
    # `_append_backward` in paddle 3.3.1, `_append_backward_desc` in 3.0.0; the same
    # `(self, train_runnable_program) -> RunnableProgram` in both.
    name = "_append_backward" if hasattr(layer, "_append_backward") else "_append_backward_desc"
    patch.install("pir.hooks.PartialProgramLayer._append_backward", layer, name, _after_append_backward)
    patch.install("pir.hooks.core.call_vjp", core, "call_vjp", double_backward.inlining_grad_ops)
    patch.install("pir.hooks.PartialProgramLayer.__init__", layer, "__init__", lambda init: _with_infer_hook(init, hook))
    patch.install("pir.hooks.executor._add_pir_fetch_ops", executor, "_add_pir_fetch_ops", lambda make: _then_inline(
        make, lambda args, kwargs, result: kwargs.get("program", args[0] if args else None), _inline_and_drop))
    # An export's calls are recorded as they are inlined, for training after jit.load.
    for module, key in ((pir_io, "pir.hooks.pir_io.normalize_pir_program"), (io, "pir.hooks.io.normalize_pir_program")):
        patch.install(key, module, "normalize_pir_program", lambda normalize: _then_inline(
            normalize, lambda args, kwargs, result: result, export.inline_export))
    export.install()
    if hasattr(RunnableProgram, "_get_program_all_values"):
        patch.install("pir.hooks.RunnableProgram._get_program_all_values", RunnableProgram, "_get_program_all_values",
                      lambda listing: _program_all_values)
    patch.install("pir.hooks.ir_backward.grad", ir_backward, "grad", lambda grad: _gradients_as_none(grad, pairs=False))
    patch.install("pir.hooks.ir_backward.append_backward", ir_backward, "append_backward",
                  lambda append: _gradients_as_none(append, pairs=True))
