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
from typing import Any, Iterator

import paddle

from . import framework, patch
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


def _tensor_stand_in() -> type:
    return _TensorMeta("Tensor", (), {"real": paddle.Tensor, "__module__": "paddle"})


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


@contextlib.contextmanager
def guarded(cls: type, method: str) -> Iterator[None]:
    """While `cls.<method>` is built (see the module docstring)."""
    from paddle import framework as public_framework
    from paddle.base import framework as base_framework

    tracer = base_framework._dygraph_tracer

    @paddle.jit.not_to_static  # called from converted code: as it is, not converted
    def dygraph_tracer() -> Any:
        real = tracer()
        if real is None and called_from_user(0):
            return _NoTracer(cls, method)
        return real

    def no_data(kind: type, name: str) -> Any:
        own = kind.__dict__.get(name)

        @paddle.jit.not_to_static
        def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not called_from_user(0):  # paddle's own code gets what it had
                if own is None:
                    raise AttributeError(name)
                return own(self, *args, **kwargs)
            raise _refusal(
                cls, method,
                f"calls .{name}() on a tensor, which has no value while a static graph is built",
                "keep the computation in paddle ops (paddle.where, paddle.clip, tensor arithmetic), "
                "or give forward the number as a Python argument of apply",
            )

        return refuse

    with contextlib.ExitStack() as stack:
        stack.enter_context(patch.swapped("eager_only.Tensor", paddle, "Tensor", _tensor_stand_in()))
        stack.enter_context(patch.swapped("eager_only.dygraph_tracer", base_framework, "_dygraph_tracer", dygraph_tracer))
        if getattr(public_framework, "_dygraph_tracer", None) is tracer:
            stack.enter_context(
                patch.swapped("eager_only.dygraph_tracer", public_framework, "_dygraph_tracer", dygraph_tracer))
        for kind in framework.static_types():
            for name in ("numpy", "item", "tolist"):  # own or inherited: restored as they were
                stack.enter_context(patch.swapped("eager_only.no_data", kind, name, no_data(kind, name)))
        yield
