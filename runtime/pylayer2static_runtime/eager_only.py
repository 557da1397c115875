"""What forward and backward may ask of tensors only in eager mode, while they are built.

- `isinstance(o, paddle.Tensor)`: False for a static value (paddle 3.3.1 `paddle.pir.Value`,
  2.6.2 `Variable`), so code that picks the tensors out of its arguments that way (PaddleNLP's
  `_NoopSaveInputs`) finds none. Inside the body, `paddle.Tensor` is a stand-in for which the
  static values of the program are tensors too, as they are in eager; paddle's own code keeps
  the real class (checks made from its files see only eager tensors, as before).
- `x.numpy()`, `x.item()`, `x.tolist()`: a static value has no data while the graph is built;
  the framework fails somewhere inside its own code, or later. Refused at the user's line
  with what to do instead.
- `paddle.framework._dygraph_tracer()`: None in a static graph, so `tracer._amp_level`
  (Paddle's RecomputeFunction) fails with an AttributeError on None. Called from user code it
  gives an object that refuses every attribute at the user's line, with what to do instead.
"""
import contextlib
import functools
from typing import Any, Callable, Iterator, Optional

import paddle

from . import framework, patch
from .core import scope
from .core.errors import PyLayerContractError
from .frames import called_from_user, refusal


def _refusal(cls: type, method: str, what: str, instead: str) -> PyLayerContractError:
    return refusal(cls, method, f"{what}; {instead}")


class _TensorMeta(type):
    """`isinstance`/`issubclass` against the stand-in: the real class's answer, or, asked from
    user code, True for the static values forward and backward get."""

    real: Any = None

    def __instancecheck__(cls, obj: Any) -> bool:
        if isinstance(obj, cls.real):
            return True
        return isinstance(obj, framework.static_types()) and called_from_user(0)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return issubclass(sub, cls.real) or (issubclass(sub, framework.static_types()) and called_from_user(0))

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.real, name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.real(*args, **kwargs)


class _NoTracer:
    """What `_dygraph_tracer()` gives user code in a static graph: no attribute to read."""

    def __init__(self, cls: type, method: str) -> None:
        object.__setattr__(self, "_p2s_owner", (cls, method))

    def __bool__(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        cls, method = object.__getattribute__(self, "_p2s_owner")
        raise _refusal(
            cls, method,
            f"reads the dygraph tracer (_dygraph_tracer().{name}), which exists only in dynamic mode "
            "(a static graph has none)",
            "pass what it needs from it (an AMP level or dtype, a flag) to apply as an argument, or "
            "read it outside the PyLayer (paddle.amp.auto_cast's own state under to_static)",
        )


def _body() -> scope.Body:
    """The body being built: `guarded` is entered inside one (`body.body_rules`)."""
    built = scope.current().body
    if built is None:
        raise RuntimeError("pylayer2static_runtime: eager_only.guarded entered outside a body")
    return built


@functools.lru_cache(maxsize=None)
def _dygraph_tracer(tracer: Callable[[], Any]) -> Callable[[], Any]:
    """`tracer` (the framework's `_dygraph_tracer`), giving user code in a body a `_NoTracer`.

    Made once per process, as the refusals below: the body it refuses for is the scope's."""

    @paddle.jit.not_to_static  # called from converted code: as it is, not converted
    def dygraph_tracer() -> Any:
        real = tracer()
        if real is None and called_from_user(0):
            built = _body()
            return _NoTracer(built.cls, built.method)
        return real

    return dygraph_tracer


@functools.lru_cache(maxsize=None)
def _no_data(kind: type, name: str, own: Optional[Callable[..., Any]]) -> Callable[..., Any]:
    """`kind.name` (`own`: its own, None when inherited or missing) refusing user code."""

    @paddle.jit.not_to_static
    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not called_from_user(0):  # paddle's own code gets what it had
            if own is None:
                raise AttributeError(name)
            return own(self, *args, **kwargs)
        built = _body()
        raise _refusal(
            built.cls, built.method,
            f"calls .{name}() on a tensor, which has no value while a static graph is built",
            "keep the computation in paddle ops (paddle.where, paddle.clip, tensor arithmetic), "
            "or give forward the number as a Python argument of apply",
        )

    return refuse


@functools.lru_cache(maxsize=None)
def _tensor_stand_in(real: type) -> type:
    return _TensorMeta("Tensor", (), {"real": real, "__module__": "paddle"})


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """While the body in scope is built (see the module docstring)."""
    from paddle import framework as public_framework
    from paddle.base import framework as base_framework

    tracer = base_framework._dygraph_tracer
    with contextlib.ExitStack() as stack:
        stack.enter_context(patch.swapped("eager_only.Tensor", paddle, "Tensor", _tensor_stand_in(paddle.Tensor)))
        stack.enter_context(
            patch.swapped("eager_only.dygraph_tracer", base_framework, "_dygraph_tracer", _dygraph_tracer(tracer)))
        if getattr(public_framework, "_dygraph_tracer", None) is tracer:
            stack.enter_context(
                patch.swapped("eager_only.dygraph_tracer", public_framework, "_dygraph_tracer", _dygraph_tracer(tracer)))
        for kind in framework.static_types():
            for name in ("numpy", "item", "tolist"):  # own or inherited: restored as they were
                refuse = _no_data(kind, name, kind.__dict__.get(name))
                stack.enter_context(patch.swapped("eager_only.no_data", kind, name, refuse))
        yield
