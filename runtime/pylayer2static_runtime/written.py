"""Bodies with control flow run as written first, converted by dy2static only when they must be.

Converting a body (convert.py) costs its whole source through some twenty AST transformers and
an origin-info map: 0.3 s each for the forward and the backward of PaddleFormers'
`FusedHeadAndCrossEntropy` (two bodies of `if`s and a `for` over a range), most of what that
PyLayer adds to a model's first step. What the conversion changes in such a body matters only
where a static value meets Python: an `if`, `while`, `and`/`or`/`not` or conditional expression
on a tensor (`__bool__`), a `range`, `len`, `int` or `float` of one (`__index__`, `__len__`,
`__int__`, `__float__`), a loop over one (`__iter__`), an item written into one (`x[i] = v`,
which the conversion makes visible to later reads of `x`; `__setitem__`), a print of one
(`__str__`, `__repr__`, `__format__`; the conversion prints when the program runs). Where control
flow is over Python values only (flags, integers, a shape known when the graph is built: `x.shape`
reads are made as the conversion makes them, `unconverted.shape_reads`), the body builds the same
ops as written as converted.

So such a body is built as written first (`run`), with those methods of the IR's static value
class raising while it runs, and a nested PyLayer, and on the legacy IR a new block, refused
before they are made (none can be taken back whole). If the body as written raises, for that
or any reason, the ops it appended to the block are taken back (`IrAdapter.take_back_ops`),
ctx is as it was (`context.checkpoint`), and the body is built converted, then and for every
later call: the result is always the converted body's where the written one would differ, and
an error a body raises is the converted body's. A body is tried as written only if it may run
twice without a difference Python sees: it writes no Python state (`core/writes.py`), prints
nothing and catches nothing (a `try` could swallow the refusal; one swallowed anyway is seen,
`_Trial.refused`).
"""
import ast
import contextlib
import types
from typing import Any, Callable, Iterator, List, Optional

import paddle

from . import framework, patch
from .core import scope, writes

_DUNDERS = ("__bool__", "__index__", "__int__", "__float__", "__complex__", "__len__", "__iter__",
            "__setitem__", "__str__", "__repr__", "__format__")


class _Refused(BaseException):
    """A body as written met what only the conversion handles (a BaseException: the user's
    `except Exception` does not swallow it)."""


class _Trial:
    """A body being built as written; `refused` once it met what only the conversion handles."""

    def __init__(self) -> None:
        self.refused = False

    def refuse(self, what: str) -> None:
        self.refused = True
        raise _Refused(what)


class WrittenFirst:
    """A body to build as written (`written`) while it may, else converted (`converted()`, made
    once when first needed). Called directly it is the converted body."""

    def __init__(self, written: Callable[..., Any], convert: Callable[[], Callable[..., Any]]) -> None:
        self.written = written
        self._convert = convert
        self._converted: Optional[Callable[..., Any]] = None
        self.needs_conversion = False

    def converted(self) -> Callable[..., Any]:
        if self._converted is None:
            self._converted = self._convert()
        return self._converted

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.converted()(*args, **kwargs)


def may_try(fn: types.FunctionType, tree: ast.FunctionDef) -> bool:
    """Whether `fn` (its definition `tree`) may be built as written first: it may run twice
    without a difference Python sees (the module docstring says why)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Try, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            return False
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount + fn.__code__.co_kwonlyargcount]
    return writes.first_write(fn, tuple(params[1:])) is None


def run(body: Any, build: Callable[[Callable[..., Any]], Any], adapter: Any, rewind: Callable[[], None]) -> Any:
    """`build(fn)`, the body built by running `fn` on the block being built: `body` as written
    first where it is a `WrittenFirst` that has not needed the conversion, else converted (the
    module docstring says how); `rewind()` makes what the body changes besides the block (ctx,
    its inputs' flags) as it was before it ran."""
    if not isinstance(body, WrittenFirst):
        return build(body)
    if body.needs_conversion or scope.current().written_trial is not None:
        return build(body.converted())
    mark = adapter.op_mark()
    trial = _Trial()
    try:
        with _refusing(trial):
            result = build(body.written)
        if not trial.refused:
            return result
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: B036 - any failure as written: built converted, which raises its own
        pass
    adapter.take_back_ops(mark)
    rewind()
    body.needs_conversion = True
    return build(body.converted())


def check_nested_build() -> None:
    """Called before a PyLayer op is built: inside a body built as written, refused (a nested
    op cannot be taken back whole), so the body is built converted."""
    trial = scope.current().written_trial
    if trial is not None:
        trial.refuse("a PyLayer applied inside the body")


@contextlib.contextmanager
def _refusing(trial: _Trial) -> Iterator[None]:
    """While a body runs as written: the static value class's methods that only the conversion
    handles refuse, as does making a block of the legacy IR, and a nested PyLayer op
    (`check_nested_build`, through the scope)."""

    def refusal(name: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            trial.refuse(name)

        return refuse

    swaps: List[Any] = [(kind, name, refusal(name)) for kind in framework.static_types() for name in _DUNDERS]
    swaps.append((paddle.base.framework.Program, "_create_block", refusal("_create_block")))
    with patch.swapped_all("written.refusals", swaps), scope.entered(written_trial=trial):
        yield
