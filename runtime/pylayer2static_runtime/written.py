"""Bodies with control flow run as written first, converted by dy2static only when they must be.

Converting a body (convert.py) costs its whole source through some twenty AST transformers and
an origin-info map: 0.3 s each for the forward and the backward of PaddleFormers'
`FusedHeadAndCrossEntropy` (two bodies of `if`s and a `for` over a range), most of what that
PyLayer adds to a model's first step. What the conversion changes in such a body matters only
where a static value meets Python: an `if`, `while`, `and`/`or`/`not` or conditional expression
on a tensor (`__bool__`), a `range`, `len`, `int` or `float` of one (`__index__`, `__len__`,
`__int__`, `__float__`), a loop over one (`__iter__`), an item written into one (`x[i] = v`,
which the conversion makes visible to later reads of `x`; `__setitem__`), a print of one
(`__str__`, `__repr__`, `__format__`; the conversion prints when the program runs). Where control
flow is over Python values only (flags, integers, a shape known when the graph is built: `x.shape`
reads are made as the conversion makes them, `unconverted.shape_reads`), the body builds the same
ops as written as converted.

So such a body is built as written first (`run`): its reads made as the conversion's
`convert_load` makes them (`unconverted.loads`: a tensor written in place is read as the write
left it, an eager tensor as the program's), and its `x.shape` reads as `convert_shape`, while
those methods of the IR's static value class raise, and a nested PyLayer, and on the legacy IR
a new block, are refused before they are made (none can be taken back whole). If the body as
written raises, for that or any reason, the ops it appended to the block are taken back
(`IrAdapter.take_back_ops`), ctx is as it was (`context.checkpoint`), and the body is built
converted, then and for every later call: the result is always the converted body's where the
written one would differ, and an error a body raises is the converted body's. A body is tried
as written only if it may run twice without a difference Python sees: it writes no Python state
(`core/writes.py`), prints nothing, draws no Python random number and catches nothing (a `try`
could swallow the refusal; one swallowed anyway is seen, `_Trial.refused`). The functions a body
calls run as written too (the conversion would convert them): one with control flow on a tensor
refuses as the body does, as does a `print` (it would print again when the body is converted),
but one reading a tensor after an in-place write would read it as before the write, so in a
body that may call functions of the user's (`calls_user_code`) an in-place write refuses.
"""
import ast
import builtins
import contextlib
import types
from typing import Any, Callable, Dict, Iterator, List, Optional, Set

import paddle

from . import framework, patch, unconverted
from .core import scope, writes

_DUNDERS = ("__bool__", "__index__", "__int__", "__float__", "__complex__", "__len__", "__iter__",
            "__setitem__", "__str__", "__repr__", "__format__")


class _Refused(BaseException):
    """A body as written met what only the conversion handles (a BaseException: the user's
    `except Exception` does not swallow it)."""


class _Trial:
    """A body being built as written; `refused` once it met what only the conversion handles.
    `calls_user_code`: whether the body may call functions of the user's (`calls_user_code`)."""

    def __init__(self, calls_user_code: bool) -> None:
        self.calls_user_code = calls_user_code
        self.refused = False

    def refuse(self, what: str) -> None:
        self.refused = True
        raise _Refused(what)

    def in_place_write(self, api: str) -> None:
        """Called by an in-place API's follower (inplace.py): refused where the body calls
        functions of the user's, which run as written, their reads not made as the conversion
        makes them, so one reading a tensor after a write would read it as before the write."""
        if self.calls_user_code:
            self.refuse(f"an in-place write ({api}) in a body calling functions of the user's")


class WrittenFirst:
    """A body to build as written (`written`) while it may, else converted (`converted()`, made
    once when first needed). Called directly it is the converted body."""

    def __init__(self, written: Callable[..., Any], calls_user_code: bool,
                 convert: Callable[[], Callable[..., Any]]) -> None:
        self.written = written
        self.calls_user_code = calls_user_code
        self._convert = convert
        self._converted: Optional[Callable[..., Any]] = None
        self.needs_conversion = False

    def converted(self) -> Callable[..., Any]:
        if self._converted is None:
            self._converted = self._convert()
        return self._converted

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.converted()(*args, **kwargs)


def may_try(fn: types.FunctionType, tree: ast.FunctionDef) -> bool:
    """Whether `fn` (its definition `tree`) may be built as written first: it may run twice
    without a difference Python sees (the module docstring says why)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Try, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            return False
        if isinstance(node, ast.Name) and node.id == "random" or isinstance(node, ast.Attribute) and node.attr == "random":
            return False  # a Python draw at build time: a refused trial would draw once more
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount + fn.__code__.co_kwonlyargcount]
    return writes.first_write(fn, tuple(params[1:])) is None


_BUILTINS = frozenset({
    "range", "len", "min", "max", "abs", "isinstance", "int", "float", "bool", "tuple", "list", "dict",
    "zip", "enumerate", "sum", "any", "all", "getattr", "hasattr", "type", "round", "reversed", "slice",
})


def _framework_objects(tree: ast.FunctionDef, namespace: Any) -> Set[str]:
    """The local names, no parameter, every assignment of which is the result of a paddle
    (numpy, math) API call, or of a method of such a name (`hcg = fleet.get_hybrid_communicate_group()`,
    `group = hcg.get_model_parallel_group()`): their methods are the framework's."""
    assigned: Dict[str, List[ast.expr]] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.comprehension)) else []
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name):
                    value = node.value if isinstance(node, ast.Assign) and target is leaf else None
                    assigned.setdefault(leaf.id, []).append(value)
    args = tree.args
    for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if arg is not None:  # bound by the caller
            assigned.setdefault(arg.arg, []).append(None)
    found: Set[str] = set()
    while True:
        more = {name for name, values in assigned.items() if name not in found and all(
            isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and _framework_receiver(value.func.value, namespace, found) for value in values)}
        if not more:
            return found
        found |= more


def _framework_receiver(node: ast.expr, namespace: Any, objects: Set[str]) -> bool:
    """Whether `node` is a paddle (numpy, math) module, or a name of `objects`."""
    if isinstance(node, ast.Name) and node.id in objects:
        return True
    module = unconverted.module_of(node, namespace)
    return module is not None and module.__name__.split(".")[0] in unconverted.MODULES


def calls_user_code(tree: ast.FunctionDef, namespace: Any) -> bool:
    """Whether the body `tree` (of a function whose globals are `namespace`) may call a function
    of the user's: any call but of a paddle (numpy, math) API or of a method of an object one
    returned (`_framework_objects`), a tensor method, a method of ctx, or a builtin of
    `_BUILTINS` not shadowed by a global."""
    args = tree.args
    positional = args.posonlyargs + args.args
    ctx_name = positional[0].arg if positional else None
    objects = _framework_objects(tree, namespace)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            if func.id not in _BUILTINS or func.id in namespace:
                return True
        elif isinstance(func, ast.Attribute):
            if unconverted.module_of(func.value, namespace) is not None or \
                    (isinstance(func.value, ast.Name) and func.value.id in objects):
                if not _framework_receiver(func.value, namespace, objects):
                    return True
            elif not (isinstance(func.value, ast.Name) and func.value.id == ctx_name) \
                    and func.attr.rstrip("_") not in unconverted.tensor_methods():  # in place too: `x.add_(y)`
                return True
        else:
            return True
    return False


def run(body: Any, build: Callable[[Callable[..., Any]], Any], adapter: Any, rewind: Callable[[], None]) -> Any:
    """`build(fn)`, the body built by running `fn` on the block being built: `body` as written
    first where it is a `WrittenFirst` that has not needed the conversion, else converted (the
    module docstring says how); `rewind()` makes what the body changes besides the block (ctx,
    its inputs' flags) as it was before it ran."""
    if not isinstance(body, WrittenFirst):
        return build(body)
    if body.needs_conversion or scope.current().written_trial is not None:
        return build(body.converted())
    mark = adapter.op_mark()
    trial = _Trial(body.calls_user_code)
    try:
        with _refusing(trial):
            result = build(body.written)
        if not trial.refused:
            return result
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: B036 - any failure as written: built converted, which raises its own
        pass
    adapter.take_back_ops(mark)
    rewind()
    body.needs_conversion = True
    return build(body.converted())


def check_nested_build() -> None:
    """Called before a PyLayer op is built: inside a body built as written, refused (a nested
    op cannot be taken back whole), so the body is built converted."""
    trial = scope.current().written_trial
    if trial is not None:
        trial.refuse("a PyLayer applied inside the body")


@contextlib.contextmanager
def _refusing(trial: _Trial) -> Iterator[None]:
    """While a body runs as written: the static value class's methods that only the conversion
    handles refuse, as does making a block of the legacy IR, and a nested PyLayer op
    (`check_nested_build`, through the scope)."""

    def refusal(name: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            trial.refuse(name)

        return refuse

    swaps: List[Any] = [(kind, name, refusal(name)) for kind in framework.static_types() for name in _DUNDERS]
    swaps.append((paddle.base.framework.Program, "_create_block", refusal("_create_block")))
    swaps.append((builtins, "print", refusal("print")))  # a function the body calls: printed again if refused
    with patch.swapped_all("written.refusals", swaps), scope.entered(written_trial=trial):
        yield
