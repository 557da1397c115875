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

While a program is built, dy2static records the parameters it reads and its in-place
writes by `id(program)` (program_translator.py `_program_hash`) and drops them when the
build returns, not when it raises (2.6.2-3.3.1 `ConcreteProgram.from_func_spec` and
`pir_from_func_spec`; 3.3.1 utils.py `graph_tracing_guard`). After a build that failed (a
contract error, a user's exception), the next program given the freed id inherits them:
parameters of another layer (`jit.save` KeyError) or, under PIR, values of the freed
program. `install` makes a failed build forget what it recorded.

The AST pass rewrites every `x.shape` to `_jst.Shape(x)` (TensorShapeTransformer), targets
too: `ctx.shape = x.shape`, the usual way a PyLayer keeps an input's shape for backward (and
`self.shape = ...` in any converted method), became `_jst.Shape(ctx) = ...`, a SyntaxError
in the converted code. `install` leaves a target as written.

Converted code calls every function through `convert_call`, which asks `is_unsupported`
whether to convert it; for a paddle API that question lists every member of a dozen modules
(some 2 ms a call, 2.6.2-3.3.1 convert_call_func.py), and a backward body calls a handful:
most of what a small body cost beyond its ops. `install` keeps the answer "as it is" for a
function a body called, the one answer the framework's test can give it again.
"""
import contextlib
import functools
import inspect
import types
from typing import Any, Callable, Dict, Iterator, List, Set, Tuple

from . import adapter, framework, patch
from .core import scope
from .inplace import followers_installed


def _class_attribute(self: Any, name: str) -> Any:
    """`StaticPyLayer.__getattr__`: what normal lookup did not find is made by the deferred
    `__init__` (its converted forward and backward) or read from the class."""
    cls = self.__dict__.get("dyfunc_self")
    if cls is None or name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    if _PENDING_INIT in self.__dict__:
        _run_pending_init(self)
        if name in self.__dict__:
            return self.__dict__[name]
    return getattr(cls, name)


_INITIALISING = "_p2s_initialising"


def _class_attribute_write(self: Any, name: str, value: Any) -> None:
    """`StaticPyLayer.__setattr__`: `Counted.calls += 1` in a converted body (a quantiser's
    init-once flag, a call counter) writes the class, as in eager. `convert_load` makes a new
    stand-in at every load of the name, so a write kept on the stand-in was lost at once: the
    next read saw the class's old value. The framework's own `__init__` sets its attributes on
    the stand-in, as does the runtime (`dyfunc_self`, its deferred-init marks)."""
    cls = self.__dict__.get("dyfunc_self")
    if cls is None or _INITIALISING in self.__dict__ or name in self.__dict__ or name.startswith("_p2s_"):
        object.__setattr__(self, name, value)
    else:
        setattr(cls, name, value)


def _class_attribute_delete(self: Any, name: str) -> None:
    """`StaticPyLayer.__delattr__`: `del Counted.cache` in a converted body deletes the class's."""
    cls = self.__dict__.get("dyfunc_self")
    if cls is None or name in self.__dict__:
        object.__delattr__(self, name)
    else:
        delattr(cls, name)


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


def keep_kwdefaults(original: Callable[..., Any], converted: Any) -> Any:
    """Give `converted` the keyword-only defaults of `original`. paddle 3.0.0 and 3.1.1
    python/paddle/jit/dy2static/utils.py `ast_to_func` rebuild the converted function with
    `types.FunctionType(code, globals, name, argdefs=__defaults__, closure)` and drop
    `__kwdefaults__` (3.2.0 sets them again; 2.6.2 returns the function as compiled), so a
    converted `def f(x, *, k=2.0)` called as `f(x)` raised TypeError there, under the
    framework's own to_static as well."""
    if not isinstance(converted, types.FunctionType) or converted.__kwdefaults__ is not None:
        return converted
    kwdefaults = getattr(original, "__kwdefaults__", None)
    if kwdefaults is None:
        kwdefaults = getattr(inspect.unwrap(original), "__kwdefaults__", None)
    if kwdefaults is not None:
        names = converted.__code__.co_varnames[
            converted.__code__.co_argcount:converted.__code__.co_argcount + converted.__code__.co_kwonlyargcount]
        if set(kwdefaults) <= set(names):
            converted.__kwdefaults__ = dict(kwdefaults)
    return converted


_CONVERSION_ERROR = "_p2s_conversion_error"
_PENDING_INIT = "_p2s_pending_init"


def _deferred_init(init: Callable[..., None]) -> Callable[..., None]:
    """`StaticPyLayer.__init__` converts forward and backward at once (paddle 3.3.1 and
    2.6.2), and `convert_load` makes one at every load of the class's name in converted code,
    the transpiled `_p2s.apply(MyLayer, ...)` included, where the runtime builds the class
    itself and only reads `dyfunc_self`: two conversions of dy2static's, never used, per
    class and process (a third of the construction time of a one-layer model). So converting
    waits for the first use of what it makes (the wrapper's own `apply`, or an attribute the
    framework's `__init__` sets), and a failure (a class-based decorator, no source, a
    default naming a module global) is raised there: merely naming a class whose forward
    dy2static cannot convert no longer fails converted code."""

    @functools.wraps(init)
    def deferred(self: Any, dyfunc_self: Any) -> None:
        self.__dict__["dyfunc_self"] = dyfunc_self
        self.__dict__[_PENDING_INIT] = init

    return deferred


def _run_pending_init(self: Any) -> None:
    """Run the framework's `__init__` deferred by `_deferred_init`, once; keep its failure."""
    init = self.__dict__.pop(_PENDING_INIT, None)
    if init is None:
        return
    self.__dict__[_INITIALISING] = True
    try:
        init(self, self.__dict__["dyfunc_self"])
    except Exception as exc:  # noqa: BLE001 - kept and raised by the wrapper's `apply`
        self.__dict__[_CONVERSION_ERROR] = exc
    finally:
        del self.__dict__[_INITIALISING]


def _deferred_apply(apply: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(apply)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        _run_pending_init(self)
        error = self.__dict__.get(_CONVERSION_ERROR)
        if error is not None:
            raise error
        return apply(self, *args, **kwargs)

    return checked


def _as_base(self: Any, bases: Any) -> Any:
    """`class C(PyLayer):` inside converted code: `convert_load` wraps every PyLayer class,
    `PyLayer` itself included, so the base would be a `StaticPyLayer` object (TypeError
    from its `__init__`); as a base it stands for its class (PEP 560)."""
    return (self.dyfunc_self,)


def _targets_as_written(visit: Callable[..., Any]) -> Callable[..., Any]:
    """`TensorShapeTransformer.visit_Attribute`, which leaves an assignment or `del` target
    as written (only a read of `x.shape` means the shape)."""
    from paddle.utils import gast

    @functools.wraps(visit)
    def visit_attribute(self: Any, node: Any) -> Any:
        if isinstance(node.ctx, gast.Load):
            return visit(self, node)
        self.generic_visit(node)
        return node

    return visit_attribute


def _recorded_keys(owners: List[Any]) -> Dict[Tuple[int, str], Set[int]]:
    return {(number, name): set(table) for number, owner in enumerate(owners)
            for name, table in vars(owner).items() if isinstance(table, dict)}


@contextlib.contextmanager
def records_forgotten_on_error() -> Iterator[None]:
    """While a build runs: what dy2static records of the programs it makes (their parameters and
    in-place writes, by `id(program)`, every IR's: `adapter.program_records`) is dropped if it
    raises; nothing pops or reads those records any more, and a later program given the freed id
    would inherit them."""
    owners = adapter.program_records()
    before = _recorded_keys(owners)
    try:
        yield
    except BaseException:
        for (number, name), keys in _recorded_keys(owners).items():
            table = getattr(owners[number], name)  # an in-place map's table is replaced when restored
            for key in keys - before.get((number, name), set()):
                del table[key]
        raise


def _forgetting_failed_builds(build: Callable[..., Any]) -> Callable[..., Any]:
    """`build`, which drops what dy2static recorded during it when it raises."""

    @functools.wraps(build)
    def build_or_forget(*args: Any, **kwargs: Any) -> Any:
        with records_forgotten_on_error():
            return build(*args, **kwargs)

    return build_or_forget


def _following_in_place_apis(build: Callable[..., Any]) -> Callable[..., Any]:
    """`build` with the in-place APIs' followers installed once for all its PyLayer calls."""

    @functools.wraps(build)
    def build_following(*args: Any, **kwargs: Any) -> Any:
        with followers_installed():
            return build(*args, **kwargs)

    return build_following


def _wrap_program_builds() -> None:
    from paddle.jit.dy2static.program_translator import ConcreteProgram

    for name, forgetting, following in (
            ("from_func_spec", "dy2static.from_func_spec", "dy2static.followers.from_func_spec"),
            ("pir_from_func_spec", "dy2static.pir_from_func_spec", "dy2static.followers.pir_from_func_spec")):
        if isinstance(ConcreteProgram.__dict__.get(name), staticmethod):  # pir_from_func_spec: 3.x
            patch.install(forgetting, ConcreteProgram, name, _forgetting_failed_builds)
            patch.install(following, ConcreteProgram, name, _following_in_place_apis)


def install() -> None:
    """Make the framework's `StaticPyLayer` wrapper read and write the class's other attributes, serve
    as a base class and convert forward and backward only when used, dy2static's converted
    functions keep Python's private-name mangling, (paddle 3.0, 3.1) keyword-only defaults
    and assignments to an attribute named `shape`, a failed build forget the records it
    left, a build install the in-place APIs' followers once, and a body's calls of what is
    not converted be screened once (a lambda it calls runs as it is)."""
    from paddle.jit.dy2static import convert_call_func
    from paddle.jit.dy2static.program_translator import FunctionCache
    from paddle.jit.dy2static.py_layer import StaticPyLayer

    _wrap_program_builds()
    patch.install("dy2static.shape_targets", framework.tensor_shape_transformer(), "visit_Attribute",
                  _targets_as_written)

    patch.install("dy2static.StaticPyLayer.__getattr__", StaticPyLayer, "__getattr__", lambda absent: _class_attribute)
    patch.install("dy2static.StaticPyLayer.__setattr__", StaticPyLayer, "__setattr__",
                  lambda absent: _class_attribute_write)
    patch.install("dy2static.StaticPyLayer.__delattr__", StaticPyLayer, "__delattr__",
                  lambda absent: _class_attribute_delete)
    patch.install("dy2static.StaticPyLayer.__init__", StaticPyLayer, "__init__", _deferred_init)
    patch.install("dy2static.StaticPyLayer.apply", StaticPyLayer, "apply", _deferred_apply)
    patch.install("dy2static.StaticPyLayer.__mro_entries__", StaticPyLayer, "__mro_entries__", lambda absent: _as_base)
    patch.install("dy2static.FunctionCache._convert", FunctionCache, "_convert", _keeping_mangling)
    patch.install("dy2static.is_unsupported", convert_call_func, "is_unsupported", _remembering_unsupported)


def _unconverted_identity(func: Any) -> Any:
    """What `is_unsupported`'s answer for `func` depends on, when that is the object alone: a
    function, a builtin of a module, or (the answer read through `__func__`: its code's file
    and `is_paddle_func`) a method's function; None for anything else (a layer, a partial)."""
    if isinstance(func, types.MethodType):
        return func.__func__ if isinstance(func.__func__, types.FunctionType) else None
    if isinstance(func, types.FunctionType):
        return func
    if isinstance(func, types.BuiltinFunctionType) and (func.__self__ is None or inspect.ismodule(func.__self__)):
        return func
    return None


def _is_lambda(func: Any) -> bool:
    """Whether `func` is a lambda: a library's method patched onto `paddle.Tensor` as one
    (`paddle.Tensor.split_new = lambda x, size, axis=-1: ...`, PaddleNLP/ERNIE style). dy2static
    reads a function's source to convert it, and a lambda's is the line around it (an
    assignment): `attach_origin_info` failed with IndexError in a body that called one. A lambda
    holds one expression and no statement to convert: it runs as it is, as in eager."""
    return isinstance(func, types.FunctionType) and func.__code__.co_name == "<lambda>"


def _remembering_unsupported(is_unsupported: Callable[[Any], bool]) -> Callable[[Any], bool]:
    # identity -> (the object, kept alive so that its id is never another's; the answer's key)
    unsupported: Dict[Tuple[bool, int], Any] = {}

    @functools.wraps(is_unsupported)
    def remembered(func: Any) -> bool:
        identity = _unconverted_identity(func) if scope.current().body is not None else None
        if identity is None:
            return is_unsupported(func)
        if _is_lambda(identity):
            return True
        key = (isinstance(func, types.MethodType), id(identity))
        if key in unsupported:
            return True
        answer = is_unsupported(func)
        if answer:  # "as it is" stays so; "convert it" is asked again, as the framework does
            unsupported[key] = identity
        return answer

    return remembered


def _keeping_mangling(convert: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(convert)
    def convert_keeping_mangling(self: Any, func: Callable[..., Any]) -> Any:
        return keep_kwdefaults(func, restore_mangling(func, convert(self, func)))

    return convert_keeping_mangling
