"""How the framework's dy2static AST pass sees PyLayer classes in converted code.

Read from paddle 3.3.1 and 2.6.2 python/paddle/jit/dy2static/convert_operators.py
(`convert_load`) and py_layer.py (`StaticPyLayer`): every load of a name bound to a
PyLayer class in converted code (3.3.1: always; 2.6.2: under to_static) yields
`StaticPyLayer(cls)`, an object with `apply` and little else. Forward and backward
run converted, so `MyLayer._helper(x)`, `Base.forward(ctx, x)` in a subclass, or a
class attribute `MyLayer.scale` inside them raise AttributeError in the framework.

Converted code is also compiled outside its class (program_translator.py
`FunctionCache._convert` compiles the function's source on its own), so private
names are not mangled there: `ctx.__x` and `MyLayer.__k` in a forward look up `__x`
and `__k`, not `_MyLayer__x` and `_MyLayer__k` as Python does, for every converted
method (an `nn.Layer.forward` with `self.__w` too). `install` restores the mangling.
"""
import functools
import inspect
import types
from typing import Any, Callable, Dict, Set


def _class_attribute(self: Any, name: str) -> Any:
    """`StaticPyLayer.__getattr__`: what normal lookup did not find is read from the class."""
    cls = self.__dict__.get("dyfunc_self")
    if cls is None or name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    return getattr(cls, name)


def _names(code: types.CodeType, into: Set[str]) -> Set[str]:
    into.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _names(const, into)
    return into


def _is_private(name: str) -> bool:
    return name.startswith("__") and not name.endswith("__")


def _remangle(code: types.CodeType, spelling: Dict[str, str]) -> types.CodeType:
    consts = tuple(_remangle(c, spelling) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    names = tuple(spelling.get(n, n) for n in code.co_names)
    return code.replace(co_names=names, co_consts=consts)


def restore_mangling(original: Callable[..., Any], converted: Any) -> Any:
    """Give `converted` (dy2static's copy of `original`) the mangled attribute and global
    names Python compiled into `original`: a name `__x` of the copy becomes `_Cls__x`
    where the original has `_Cls__x`."""
    source = getattr(inspect.unwrap(original), "__code__", None)
    target = getattr(converted, "__code__", None)
    if not isinstance(source, types.CodeType) or not isinstance(target, types.CodeType):
        return converted
    mangled = [n for n in _names(source, set()) if "__" in n[1:] and n.startswith("_")]
    spelling: Dict[str, str] = {}
    for name in _names(target, set()):
        if _is_private(name):
            matches = [m for m in mangled if m.endswith(name) and m[1:-len(name)].lstrip("_") == m[1:-len(name)]
                       and m[1:-len(name)]]
            if len(matches) == 1:
                spelling[name] = matches[0]
    if spelling:
        converted.__code__ = _remangle(target, spelling)
    return converted


def install() -> None:
    """Make the framework's `StaticPyLayer` wrapper read the class's other attributes, and
    dy2static's converted functions keep Python's private-name mangling."""
    from paddle.jit.dy2static.program_translator import FunctionCache
    from paddle.jit.dy2static.py_layer import StaticPyLayer

    if "__getattr__" not in StaticPyLayer.__dict__:
        StaticPyLayer.__getattr__ = _class_attribute
    convert = FunctionCache._convert
    if getattr(convert, "_p2s_mangling", False):
        return

    @functools.wraps(convert)
    def convert_keeping_mangling(self: Any, func: Callable[..., Any]) -> Any:
        return restore_mangling(func, convert(self, func))

    convert_keeping_mangling._p2s_mangling = True  # type: ignore[attr-defined]
    FunctionCache._convert = convert_keeping_mangling
