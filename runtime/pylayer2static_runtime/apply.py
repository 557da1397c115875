"""Entry points called by generated code: `apply`, `applier`, `register`.

In dynamic mode a call is exactly the eager `cls.apply(...)`; while a static graph
is being built (dy2static AST conversion, `paddle.enable_static()` programs,
`paddle.jit.save`) it goes through the class's registered builder, or through
the generic path (the call as written, bound once to forward's signature by the same
`PyLayerOp`) for classes without one (classes made inside functions, calls made before registration).
"""
import functools
from typing import Any, Callable

import paddle

from . import builders, sot


def _layer_class(layer: Any) -> type:
    # Inside dy2static-converted code `convert_load` replaces a PyLayer class by
    # `paddle.jit.dy2static.py_layer.StaticPyLayer(cls)`, which keeps the class as
    # `.dyfunc_self` (paddle 3.3.1 and 2.6.2).
    from paddle.jit.dy2static.py_layer import StaticPyLayer

    if isinstance(layer, StaticPyLayer):
        return layer.dyfunc_self
    return layer


def _is_pylayer(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, paddle.autograd.PyLayer)


def register(cls: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: make the decorated function the static-graph builder of `cls`."""

    def decorator(builder: Callable[..., Any]) -> Callable[..., Any]:
        builders.register(cls, builder)
        return paddle.jit.not_to_static(builder)

    return decorator


@sot.one_call_in_graph(lambda args: _layer_class(args[0]) if args else None)
@paddle.jit.not_to_static
def apply(layer: Any, *args: Any, **kwargs: Any) -> Any:
    """`layer.apply(*args, **kwargs)`, built as a `pylayer` op when a static graph is being built.

    `layer` may be anything the transpiler could not resolve ahead of time (`self.layer_cls`,
    a parameter): what is not a PyLayer class gets its own `apply` called, unchanged.
    """
    cls = _layer_class(layer)
    if not _is_pylayer(cls):
        return layer.apply(*args, **kwargs)
    if paddle.in_dynamic_mode():
        return sot.run_eagerly(cls.apply, *args, **kwargs)
    return builders.build_call(cls, args, kwargs)


def applier(layer: Any) -> Callable[..., Any]:
    """A callable equivalent to `layer.apply` that routes through `apply`."""
    cls = _layer_class(layer)
    if not _is_pylayer(cls):
        return layer.apply

    @sot.one_call_in_graph(lambda args: cls)
    @paddle.jit.not_to_static
    @functools.wraps(cls.apply)
    def apply_layer(*args: Any, **kwargs: Any) -> Any:
        return apply(cls, *args, **kwargs)

    apply_layer.__qualname__ = f"{cls.__qualname__}.apply"
    return apply_layer
