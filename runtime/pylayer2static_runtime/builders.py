"""The builder registry: each class's static-graph builder, and one call built through it.

Generated code registers a builder per PyLayer class (`register`); `build_call` builds a
call through the class's builder, or through the generic one (the call as written, bound
once to forward's signature by `PyLayerOp`) for classes without one. The entry points
(`apply.py`) and the rebuild of an export's calls after `jit.load` (`pir/reload.py`) both
build through it.
"""
from typing import Any, Callable, Dict, Tuple

from .core.layout import written
from .inplace import followers_installed
from .op import PyLayerOp

_BUILDERS: Dict[type, Callable[..., Any]] = {}


def register(cls: type, builder: Callable[..., Any]) -> None:
    """Make `builder` the static-graph builder of `cls`."""
    _BUILDERS[cls] = builder


def builder_of(cls: type) -> Callable[..., Any]:
    """The registered builder of `cls`, or the generic one."""
    builder = _BUILDERS.get(cls)
    if builder is not None:
        return builder

    def generic(*args: Any, **kwargs: Any) -> Any:
        return PyLayerOp(cls, args, kwargs).build(forward=cls.forward, backward=cls.backward)

    return generic


def build_call(cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """`cls.apply(*args, **kwargs)` built in the static graph being built.

    The builder binds the call to forward's parameters; each argument carries its place in
    the call as written through it to `PyLayerOp`, since eager matches backward's return
    values to the arguments in that order (positional ones, then keywords as written).
    """
    marked_args, marked_kwargs = written(args, kwargs)
    with followers_installed():
        return builder_of(cls)(*marked_args, **marked_kwargs)
