"""Forward and backward as they run in a static graph: their bodies converted by dy2static,
their decorators run as written.

dy2static (paddle 3.3.1 and 2.6.2 program_translator.py `FunctionCache._convert`) converts a
function from its source, decorators included, and its DecoratorTransformer applies those
decorators again around the converted body. That is right only for a decorator chain made
with `functools.wraps` that dy2static reaches through `__wrapped__`; a decorator without
`wraps` (its wrapper is converted, and the function it calls is converted with the decorator
re-applied: the decorator runs twice, silently), a class-based decorator (refused), or a
decorator whose definition has side effects (run again) all differ from eager.

So the function the user wrote (the `def` named like the method) is converted without its
decorators, and the decorated object is rebuilt around the converted function: every
wrapper, closure and decorator object is copied with the user's function replaced, and runs
natively, exactly as eager runs it.
"""
import copy
import functools
import types
import weakref
from typing import Any, Callable, List, Optional

from .dy2static import restore_mangling

_CONVERTED: "weakref.WeakKeyDictionary[Any, Callable[..., Any]]" = weakref.WeakKeyDictionary()
_SEARCH_DEPTH = 16


def _referenced(obj: Any) -> List[Any]:
    """What a decorator's wrapper may call: closure cells, `__wrapped__`, `__func__`, attributes."""
    found: List[Any] = []
    if isinstance(obj, (staticmethod, classmethod)):
        found.append(obj.__func__)
    elif isinstance(obj, types.FunctionType):
        for cell in obj.__closure__ or ():
            try:
                found.append(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        if hasattr(obj, "__wrapped__"):
            found.append(obj.__wrapped__)
    elif callable(obj) and not isinstance(obj, type) and hasattr(obj, "__dict__"):
        found.extend(vars(obj).values())
    return [item for item in found if callable(item) or isinstance(item, (staticmethod, classmethod))]


def user_function(fn: Any, name: str) -> Optional[types.FunctionType]:
    """The function the user defined as `name` inside the decorators around `fn`, if any."""
    queue, seen = [(fn, 0)], set()
    while queue:
        obj, depth = queue.pop(0)
        if id(obj) in seen or depth > _SEARCH_DEPTH:
            continue
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType) and obj.__code__.co_name == name:
            return obj
        queue.extend((item, depth + 1) for item in _referenced(obj))
    return None


def _rebuilt(obj: Any, user: Any, converted: Any, depth: int = 0) -> Any:
    """`obj` with every reference to `user` (directly or through decorators) now `converted`."""
    if obj is user:
        return converted
    if depth > _SEARCH_DEPTH:
        return obj
    if isinstance(obj, (staticmethod, classmethod)):
        inner = _rebuilt(obj.__func__, user, converted, depth + 1)
        return obj if inner is obj.__func__ else type(obj)(inner)
    if isinstance(obj, types.FunctionType):
        cells = []
        changed = False
        for cell in obj.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:
                cells.append(cell)
                continue
            new = _rebuilt(value, user, converted, depth + 1)
            changed |= new is not value
            cells.append(types.CellType(new) if new is not value else cell)
        wrapped = getattr(obj, "__wrapped__", None)
        new_wrapped = _rebuilt(wrapped, user, converted, depth + 1) if wrapped is not None else None
        if not changed and new_wrapped is wrapped:
            return obj
        copy_fn = types.FunctionType(
            obj.__code__, obj.__globals__, obj.__name__, obj.__defaults__, tuple(cells) if obj.__closure__ else None
        )
        copy_fn.__kwdefaults__ = obj.__kwdefaults__
        functools.update_wrapper(copy_fn, obj, assigned=("__module__", "__qualname__", "__doc__"), updated=("__dict__",))
        if wrapped is not None:
            copy_fn.__wrapped__ = new_wrapped
        return copy_fn
    if callable(obj) and not isinstance(obj, type) and hasattr(obj, "__dict__"):
        changes = {k: _rebuilt(v, user, converted, depth + 1) for k, v in vars(obj).items()}
        changes = {k: v for k, v in changes.items() if v is not vars(obj)[k]}
        if not changes:
            return obj
        twin = copy.copy(obj)
        for key, value in changes.items():
            setattr(twin, key, value)
        return twin
    return obj


def _converted_without_decorators(fn: types.FunctionType) -> Callable[..., Any]:
    """`fn`'s body converted by dy2static, its decorators left out (they run natively)."""
    from paddle.jit.dy2static import program_translator as translator

    gast = translator.gast
    source = translator.func_to_source_code(fn)
    root = gast.parse(source)
    for node in root.body:
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            _keep_only_the_body(node, gast)
    root = translator.attach_origin_info(root, fn)
    root = translator._FUNCTION_CACHE._dygraph_to_static.get_static_ast(root)
    converted, _ = translator.ast_to_func(root, fn)
    translator.create_and_update_origin_info_map(root, converted)
    converted.__defaults__ = fn.__defaults__
    converted.__kwdefaults__ = fn.__kwdefaults__
    return restore_mangling(fn, converted)


def _keep_only_the_body(node: Any, gast: Any) -> None:
    """Drop what the `def` evaluates when it runs: decorators, defaults and annotations.

    dy2static runs the converted source as a module of its own (utils.py `ast_to_func`),
    where a default or annotation naming one of the user's globals (`nranks=NRANKS`) is
    not yet defined; the function's own defaults are put back after conversion.
    """
    node.decorator_list = []
    node.returns = None
    args = node.args
    args.defaults = [gast.Constant(value=None, kind=None) for _ in args.defaults]
    args.kw_defaults = [None if d is None else gast.Constant(value=None, kind=None) for d in args.kw_defaults]
    for arg in list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs) + [args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None


def static_function(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The forward or backward (`name`) to call while a static graph is built."""
    from paddle.jit.dy2static.program_translator import unwrap_decorators

    _, fn = unwrap_decorators(fn)
    try:
        cached = _CONVERTED.get(fn)
    except TypeError:  # not weak-referenceable: convert each time
        cached = None
    if cached is not None:
        return cached
    user = user_function(fn, name)
    if user is None and isinstance(fn, types.FunctionType):
        user = fn  # defined under another name and assigned: no decorator to keep apart
    if user is None:
        return fn  # nothing of the user's to convert: run it as it is
    try:
        converted = _converted_without_decorators(user)
    except (OSError, TypeError):  # no source to convert (e.g. built with exec): run as is
        return fn
    result = _rebuilt(fn, user, converted)
    try:
        _CONVERTED[fn] = result
    except TypeError:
        pass
    return result
