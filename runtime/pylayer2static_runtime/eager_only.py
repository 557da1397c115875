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
- An attribute static values lack (`_missing_attribute`, looked up by user code): a bare
  AttributeError naming `paddle.base.libpaddle.pir.Value` or `Variable` before. Where the
  framework can express it, it runs as eager: `x._share_buffer_to(y)` as an assign of `x`
  into `y` (followed as the in-place write it is, inplace.py), and a method a library
  patched onto `paddle.Tensor` at import, written in Python over Tensor ops (a function, a
  lambda, a `functools.partialmethod`, a `functools.partial`), is bound to the static value as
  it is to eager tensors (a lambda runs as it is, `dy2static._is_lambda`). Else refused at the user's line with what to
  do: an eager tensor's own attribute, or a numpy array's (`x.numpy().tobytes()` in a
  function forward calls: dy2static deletes the `.numpy()` calls of the functions it
  converts, ifelse_transformer.py `IfElseTransformer.visit_Call`, so the array is the static
  value there and the `.numpy()` refusal cannot fire; convert.py keeps them in forward and
  backward themselves). The error is an AttributeError too, so `hasattr` and `getattr`
  with a default answer as before.
"""
import contextlib
import functools
import inspect
import types
from typing import Any, Callable, Iterator, Optional

import numpy
import paddle

from . import framework, patch
from .core import scope
from .core.errors import EagerOnlyAttributeError, PyLayerContractError
from .frames import accessed_by_user, called_from_user, refusal, written_by_user


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


def _share_buffer_to(source: Any, target: Any) -> None:
    """`source._share_buffer_to(target)` on static values: `target` holds `source`'s values
    after it, as in eager, through the in-place `paddle.assign` the body follows."""
    paddle.assign(source, output=target)


@functools.lru_cache(maxsize=None)
def _missing_attribute(tensor: type) -> Callable[[Any, str], Any]:
    """The `__getattr__` of the static value types while a body is built (see the module
    docstring), refusing for the body in scope; `tensor` is the real `paddle.Tensor`."""

    def __getattr__(self: Any, name: str) -> Any:
        eager = getattr(tensor, name, None)
        if name.startswith("__") or not accessed_by_user(0) or (eager is None and not hasattr(numpy.ndarray, name)):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if name == "_share_buffer_to":
            return functools.partial(_share_buffer_to, self)
        if written_by_user(eager):
            return types.MethodType(eager, self)
        patched = inspect.getattr_static(tensor, name, None)
        if isinstance(patched, functools.partialmethod):  # patched on as one: bound as eager binds it
            return patched.__get__(self, type(self))
        if isinstance(patched, functools.partial):  # no descriptor: eager's attribute is the partial itself
            return patched
        if eager is not None:
            what = (f"reads .{name} of a tensor, which eager tensors have and the values of a static graph "
                    "lack; express it with paddle ops, or compute it outside the PyLayer and pass it to apply")
        else:
            what = (f"reads .{name}, an attribute of the numpy array eager's .numpy() gives, of a tensor: in a "
                    "function forward or backward calls, dy2static drops .numpy() calls, and a static value has no "
                    "data while the graph is built; keep the computation in paddle ops, or run debug code (a "
                    "hash, a print of values) in eager mode only (under `if paddle.in_dynamic_mode():`)")
        built = _body()
        raise refusal(built.cls, built.method, what, EagerOnlyAttributeError)

    return __getattr__


def _body() -> scope.Body:
    """The body being built: the guards are swapped in only while one is (`body.body_rules`)."""
    built = scope.current().body
    if built is None:
        raise RuntimeError("pylayer2static_runtime: an eager-only guard ran outside a body")
    return built


@functools.lru_cache(maxsize=None)
def _dygraph_tracer(tracer: Callable[[], Any]) -> Callable[[], Any]:
    """`tracer` (the framework's `_dygraph_tracer`), giving user code in a body a `_NoTracer`.
    Made once per process, as the other guards: the body they refuse for is the scope's."""

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
    tensor = paddle.Tensor.real if isinstance(paddle.Tensor, _TensorMeta) else paddle.Tensor  # a body in a body
    with contextlib.ExitStack() as stack:
        stack.enter_context(patch.swapped("eager_only.Tensor", paddle, "Tensor", _tensor_stand_in(tensor)))
        stack.enter_context(
            patch.swapped("eager_only.dygraph_tracer", base_framework, "_dygraph_tracer", _dygraph_tracer(tracer)))
        if getattr(public_framework, "_dygraph_tracer", None) is tracer:
            stack.enter_context(
                patch.swapped("eager_only.dygraph_tracer", public_framework, "_dygraph_tracer", _dygraph_tracer(tracer)))
        for kind in framework.static_types():
            for name in ("numpy", "item", "tolist"):  # own or inherited: restored as they were
                refuse = _no_data(kind, name, kind.__dict__.get(name))
                stack.enter_context(patch.swapped("eager_only.no_data", kind, name, refuse))
            stack.enter_context(patch.swapped("eager_only.missing_attribute", kind, "__getattr__",
                                              _missing_attribute(tensor)))
        yield
