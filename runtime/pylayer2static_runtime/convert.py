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
natively, exactly as eager runs it. Straight-line code the conversion would not change runs
as written, and such code reading `x.shape` with those reads made as the conversion makes
them (`unconverted.py`); a body with control flow is built as written first, its reads made
as the conversion makes them, and converted only when that is refused (`written.py`).

dy2static names what it adds to converted code (the iterator of a `for`, the branches of an
`if`) with the framework's unique-name generator and recognises its own names by their prefix
(paddle 3.3.1 and 2.6.2 transformers/utils.py `FOR_ITER_ITERATOR_PREFIX`, ...; the if-else
pass leaves them out of the branches' `nonlocal` lists, ifelse_transformer.py
`create_convert_ifelse_node`). A generator with a prefix of its own makes every such name miss:
SOT infers a recorded call's meta under `UniqueNameGenerator("___SOT_INFER_META_INNER_VAR")`
(paddle 3.3.1 jit/sot/infer_meta.py `VariableCreator.infer_meta`), so a body converted there
with a `for` inside an `if` was compiled with `nonlocal ___SOT_INFER_META_INNER_VAR__for_loop_
iter_iterator_1`, a SyntaxError, and the call ran eagerly, breaking SOT's graph. Conversions
(`plain_names`) run with a prefix-free generator sharing the current one's counters.
"""
import ast
import contextlib
import copy
import functools
import types
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional

from . import framework, written
from .dy2static import restore_mangling
from .unconverted import LOAD_NAME, SHAPE_NAME, loads, plain_body, shape_reads, written_body

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


@contextlib.contextmanager
def plain_names() -> Iterator[None]:
    """The framework's unique names without the prefix of the generator in force, if it has one
    (the module docstring says why): a generator with the same counters (so names stay unique in
    the program being built, and apart from the prefixed ones) and no prefix; the parameter-name
    checker kept (`unique_name.guard` would replace it)."""
    from paddle.base import unique_name

    current = unique_name.generator
    if not current.prefix:
        yield
        return
    plain = unique_name.UniqueNameGenerator()
    plain.ids = current.ids
    previous, checker = unique_name.switch(plain, unique_name.dygraph_parameter_name_checker)
    try:
        yield
    finally:
        unique_name.switch(previous, checker)


def _converted_without_decorators(fn: types.FunctionType) -> Callable[..., Any]:
    """`fn`'s body converted by dy2static, its decorators left out (they run natively)."""
    with plain_names():
        return _convert(fn)


def _convert(fn: types.FunctionType) -> Callable[..., Any]:
    from paddle.jit.dy2static import program_translator as translator

    gast = translator.gast
    source = translator.func_to_source_code(fn)
    root = gast.parse(source)
    for node in root.body:
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            _keep_only_the_body(node, gast)
    _keep_numpy_calls(root, gast)
    root = translator.attach_origin_info(root, fn)
    root = translator._FUNCTION_CACHE._dygraph_to_static.get_static_ast(root)
    if fn.__closure__ and not framework.converts_closures():
        _wrap_in_factory(root, fn, gast)
        factory, _ = translator.ast_to_func(root, fn)
        converted = _with_cells_of(fn, factory())
        translator.create_and_update_origin_info_map(root, factory)  # the same file, lines
    else:
        converted, _ = translator.ast_to_func(root, fn)
        translator.create_and_update_origin_info_map(root, converted)
    converted.__defaults__ = fn.__defaults__
    converted.__kwdefaults__ = fn.__kwdefaults__
    return restore_mangling(fn, converted)


def _with_shape_reads(fn: types.FunctionType, tree: ast.FunctionDef) -> types.FunctionType:
    """`fn` compiled from `tree`, its definition with the `.shape` reads rewritten
    (`unconverted.shape_reads`): in `fn`'s file at its lines, reading `fn`'s globals and
    closure cells, with its defaults and mangled names; `convert_shape` and `convert_load` (for
    `unconverted.loads`) bound as the factory's arguments, never globals of the user's module."""
    from paddle.jit.dy2static.convert_operators import convert_load, convert_shape

    tree.decorator_list = []
    tree.returns = None
    args = tree.args
    args.defaults = [ast.Constant(None) for _ in args.defaults]  # fn's own are put back below
    args.kw_defaults = [None if d is None else ast.Constant(None) for d in args.kw_defaults]
    for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None
    free = [ast.arg(name) for name in (SHAPE_NAME, LOAD_NAME, *fn.__code__.co_freevars)]
    factory = ast.FunctionDef(
        name="_p2s_factory", args=ast.arguments(posonlyargs=[], args=free, kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[tree, ast.Return(ast.Name(tree.name, ast.Load()))], decorator_list=[])
    module = ast.Module([ast.copy_location(factory, tree)], [])
    namespace: Dict[str, Any] = {}
    exec(compile(ast.fix_missing_locations(module), fn.__code__.co_filename, "exec"), fn.__globals__, namespace)
    made = _with_cells_of(fn, namespace["_p2s_factory"](convert_shape, convert_load, *[None] * len(fn.__code__.co_freevars)))
    made.__defaults__ = fn.__defaults__
    made.__kwdefaults__ = fn.__kwdefaults__
    made.__qualname__ = fn.__qualname__
    return restore_mangling(fn, made)


def _wrap_in_factory(root: Any, fn: types.FunctionType, gast: Any) -> None:
    """Put `fn`'s converted definition in `root` inside a factory function binding its free
    variables, as paddle 3.x `ast_to_func` does (`wrap_as_closure`).

    paddle 2.6.2 runs converted code as a module of its own (utils.py `ast_to_func`), so a
    name `fn` reads from its closure (a class made in a factory function whose forward reads
    the factory's argument) became a global there: NameError, the framework's own path too.
    """
    name = fn.__code__.co_name
    free = fn.__code__.co_freevars
    factory = gast.parse(
        f"def {name}():\n" + "".join(f"    {v} = None\n" for v in free) + f"    return {name}\n"
    ).body[0]
    index = next(i for i, node in enumerate(root.body)
                 if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) and node.name == name)
    factory.body.insert(len(free), root.body[index])
    root.body[index] = factory


def _with_cells_of(fn: types.FunctionType, inner: types.FunctionType) -> types.FunctionType:
    """`inner` (made by `_wrap_in_factory`'s factory) reading `fn`'s own closure cells, so it
    sees what they hold when it runs, as `fn` does."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    own = dict(zip(inner.__code__.co_freevars, inner.__closure__ or ()))
    closure = tuple(cells.get(name, own.get(name)) for name in inner.__code__.co_freevars)
    rebuilt = types.FunctionType(inner.__code__, inner.__globals__, inner.__name__, inner.__defaults__,
                                 closure or None)
    rebuilt.__kwdefaults__ = inner.__kwdefaults__
    return rebuilt


def _keep_numpy_calls(root: Any, gast: Any) -> None:
    """Make every `e.numpy()` of the body `e.numpy.__call__()`, which dy2static leaves alone.

    dy2static deletes every `.numpy()` call (paddle 3.3.1 and 2.6.2 ifelse_transformer.py
    `IfElseTransformer.visit_Call`: `x.numpy()` becomes `x`), so forward's `x.numpy().copy()`
    failed with "Value has no attribute copy", and code using the array otherwise got a
    tensor where eager has an array. Called as written, a static value's `numpy` refuses at
    the user's line, saying what to do (eager_only.py); other objects' run as in eager.
    """
    for node in gast.walk(root):
        func = getattr(node, "func", None) if isinstance(node, gast.Call) else None
        if isinstance(func, gast.Attribute) and func.attr == "numpy" and not node.args and not node.keywords:
            node.func = gast.Attribute(value=func, attr="__call__", ctx=gast.Load())


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
    tree = plain_body(user)
    if tree is not None and not shape_reads(tree):
        result = fn
    elif tree is not None:  # straight-line, reading `x.shape`
        result = _rebuilt(fn, user, _with_shape_reads(user, tree))
    else:
        tree = written_body(user)
        if tree is not None and written.may_try(user, tree):
            calls_user_code = written.calls_user_code(tree, user.__globals__)
            shape_reads(tree)
            loads(tree)
            result = written.WrittenFirst(_rebuilt(fn, user, _with_shape_reads(user, tree)), calls_user_code,
                                          lambda: _rebuilt(fn, user, _converted_without_decorators(user)))
        else:
            try:
                result = _rebuilt(fn, user, _converted_without_decorators(user))
            except (OSError, TypeError):  # no source to convert (e.g. built with exec): run as is
                return fn
    try:
        _CONVERTED[fn] = result
    except TypeError:
        pass
    return result
