"""The build scope: what a body being built needs to know of the builds around it.

A PyLayer's forward or backward can apply PyLayers itself, so builds nest, and how an inner
one is built depends on the outer ones (inside a backward with grad mode off a PyLayer runs
inline; inside a forward grad mode is forward's). All of that is one immutable `BuildScope`.
The scope in force is a context variable: a build enters a derived scope for the length of a
body (`entered`) and the scope before it is back when the body ends, however it ends; what a
body changes while it runs (its grad mode) replaces the scope it entered (`update`). Nothing
else of a build lives in module globals. Paddle-free.
"""
import contextlib
import contextvars
import dataclasses
from typing import Any, Dict, Iterator, List, Optional


@dataclasses.dataclass(frozen=True)
class Body:
    """A forward or backward being built, as in-place writes see it (`inplace.py`)."""

    cls: type
    method: str  # "forward" or "backward"
    foreign: List[Any]  # what it may not write into in place (forward: the op's inputs)
    adapter: Any  # the IR's `adapter.IrAdapter`: whether two tensors are one, its in-place map


@dataclasses.dataclass(frozen=True)
class BuildScope:
    """The nesting state of the build in progress (the defaults: no build)."""

    backward_depth: int = 0
    """How many backward functions are being built around this point."""
    backward_mode: Any = False
    """The grad mode of the innermost backward: falsy at its top (`op.py` `_BackwardEntry`)
    until `paddle.enable_grad()` there turns it on."""
    forward_mode: Optional[bool] = None
    """The grad mode of the forward body built innermost; None when the innermost body is no
    forward."""
    body: Optional[Body] = None
    """The body whose in-place writes are followed, innermost."""
    apis_followed: bool = False
    """Whether the in-place APIs' followers are in place (`inplace.followers_installed`)."""
    followed_calls: int = 0
    """How many followed in-place API calls are running (their own warning is expected)."""
    sot_recording: bool = False
    """Whether a call SOT records is being built (a PyLayer applied inside it is part of it)."""
    written_trial: Any = None
    """While a body is built as written first (`written.py`): that trial; else None."""
    sot_graph_parameters: Any = None
    """While SOT compiles a graph: its `ParametersHolder`, the parameters its inputs stand for
    by symbol (`sot._as_program_parameters`); else None."""
    export_records: Optional[Dict[str, Dict[str, Any]]] = None
    """The call records of the export being saved, else None (`pir/export.py`)."""


_CURRENT: "contextvars.ContextVar[BuildScope]" = contextvars.ContextVar("pylayer2static_build", default=BuildScope())


def current() -> BuildScope:
    """The scope in force."""
    return _CURRENT.get()


def update(**changes: Any) -> None:
    """Replace the scope in force by one with `changes`, until the scope entered last ends."""
    _CURRENT.set(dataclasses.replace(_CURRENT.get(), **changes))


@contextlib.contextmanager
def entered(**changes: Any) -> Iterator[BuildScope]:
    """The scope in force with `changes`, for the length of the block; the one before after it."""
    token = _CURRENT.set(dataclasses.replace(_CURRENT.get(), **changes))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)
