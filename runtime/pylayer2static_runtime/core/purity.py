"""Whether a body's build depends only on what its call passes it: the reads to guard, or None.

A call's blocks are built again from a recording of an earlier call (`replay.py`) only when
building them by running forward and backward again could not differ: the same functions on
arguments alike, and the same values of whatever else they read. This module reads a
function's bytecode once (`reads`) and says what else it reads: each global name it loads (a
module-level value, or a builtin) and each closure cell, followed into the Python functions
it reaches that way. `guard` takes those values at a call; a call is replayed only when they
are the ones recorded.

A function is refused (None) when what it does could leave a mark a replay would not, or
read what a replay would not read again:
- it stores or deletes a global, a variable of an enclosing function, or an attribute of
  anything but forward's/backward's context (`ctx.scale = scale` is the call's own);
- it loads a value that may change in place without being rebound: anything but a Python
  function (followed), an immutable value, and a module, class or builtin of the framework
  or the language (`_MODULES`; a user's enum, named tuple or exception class too). A list, a
  dict, a layer, a tensor, a user's module or class (whose attributes are not followed) are
  refused, as are a helper's mutable defaults and an import from a user's module;
- it loads a builtin that talks to the world (`print`, `open`, `setattr`, ...), mentions
  `random` (a draw at build time gives each build its own value), or a name not bound yet.
What the attributes of the framework's modules and classes hold is not followed: they are
taken as the same for the length of a build. Paddle-free.
"""
import builtins
import dis
import enum
import functools
import types
from typing import Any, Dict, List, Optional, Set, Tuple

_MODULES = frozenset({"paddle", "numpy", "math", "operator", "functools", "itertools", "typing", "collections"})
"""Packages whose modules a body may load: their attributes a build reads are the framework's
and the language's, not state of the model being built."""
_IMPURE_BUILTINS = frozenset({
    "print", "input", "open", "exec", "eval", "compile", "setattr", "delattr", "globals", "locals",
    "vars", "__import__", "breakpoint", "exit", "quit", "help",
})
_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, range, slice, type(Ellipsis), enum.Enum)
_UNREPEATABLE = frozenset({"random"})
"""Names a body may not mention: numpy's (or Python's) random draws give each build its own value."""
_STORES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL", "DELETE_ATTR", "DELETE_DEREF"})


class Read:
    """One value a function reads besides its arguments: `namespace[name]` (a module's globals
    or builtins) or a closure cell; `by_value`: compared by equality, else by identity."""

    __slots__ = ("namespace", "name", "cell", "by_value")

    def __init__(self, namespace: Optional[Dict[str, Any]], name: str, cell: Any, by_value: bool) -> None:
        self.namespace = namespace
        self.name = name
        self.cell = cell
        self.by_value = by_value

    def value(self) -> Any:
        if self.cell is not None:
            return self.cell.cell_contents
        return self.namespace.get(self.name, _MISSING) if self.namespace is not None else _MISSING


_MISSING = object()


def immutable(value: Any) -> bool:
    """Whether `value` cannot change in place: None, numbers, strings, enum members (a
    framework's dtype among them), tuples and frozensets of those."""
    if isinstance(value, _IMMUTABLE):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(immutable(item) for item in value)
    kind = type(value)
    return hasattr(kind, "__members__") and kind.__module__.split(".")[0] in _MODULES  # pybind11 enums


def reads(fn: Any) -> Optional[Tuple[Read, ...]]:
    """What `fn` (a forward or backward, its first parameter the context) reads besides its
    arguments, followed into the functions it calls by name; None if replaying a build of it
    could differ from running it (the module's rules)."""
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        return None
    return _reads(fn, True)


@functools.lru_cache(maxsize=None)
def _reads(fn: types.FunctionType, is_body: bool) -> Optional[Tuple[Read, ...]]:
    found: List[Read] = []
    seen: Set[Tuple[int, str]] = set()
    ctx = fn.__code__.co_varnames[0] if is_body and fn.__code__.co_argcount else None
    if not _follow(fn, ctx, found, seen):
        return None
    return tuple(found)


def _follow(fn: types.FunctionType, ctx: Optional[str], found: List[Read], seen: Set[Tuple[int, str]]) -> bool:
    namespace = fn.__globals__
    defaults = list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    if ctx is None and not all(immutable(value) for value in defaults):
        return False  # a helper's mutable default is state kept between calls
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # not bound yet
            return False
        if not _admit(value, None, name, cell, found, seen):
            return False
    for code in _codes(fn.__code__):
        if not _plain(code, ctx if code is fn.__code__ else None):
            return False
        for name in _global_loads(code):
            if (id(namespace), name) in seen:
                continue
            seen.add((id(namespace), name))
            if name in namespace:
                if not _admit(namespace[name], namespace, name, None, found, seen):
                    return False
            elif name in _IMPURE_BUILTINS or not hasattr(builtins, name):
                return False
    return True


def _admit(value: Any, namespace: Optional[Dict[str, Any]], name: str, cell: Any,
           found: List[Read], seen: Set[Tuple[int, str]]) -> bool:
    """Whether a body may read `value` (recorded in `found`), following a function into its own."""
    if immutable(value):
        found.append(Read(namespace, name, cell, True))
        return True
    if isinstance(value, types.FunctionType):
        if not _follow(value, None, found, seen):
            return False
    elif not isinstance(value, (types.ModuleType, type, types.BuiltinFunctionType)) or not _known(value):
        return False
    found.append(Read(namespace, name, cell, False))
    return True


def _known(value: Any) -> bool:
    """Whether a module, class or builtin is the framework's or the language's (`_MODULES`,
    builtins), or a class whose attributes are fixed (an enum, a named tuple, an exception):
    what a body reads of its attributes is not the model's state."""
    if isinstance(value, type) and issubclass(value, (enum.Enum, tuple, BaseException)):
        return True
    module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None) or ""
    return module.split(".")[0] in _MODULES or module == "builtins"


def _codes(code: types.CodeType) -> List[types.CodeType]:
    """`code` and the code objects inside it (comprehensions, lambdas, nested functions)."""
    codes = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            codes.extend(_codes(const))
    return codes


@functools.lru_cache(maxsize=None)
def _global_loads(code: types.CodeType) -> Tuple[str, ...]:
    return tuple({ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")})


def _plain(code: types.CodeType, ctx: Optional[str]) -> bool:
    """Whether `code` stores nothing outside itself: no global, no variable of an enclosing
    function, no attribute but of `ctx` (the body's context parameter, None for others)."""
    if _UNREPEATABLE & set(code.co_names):
        return False
    previous = None
    for ins in dis.get_instructions(code):
        if ins.opname in _STORES:
            return False
        if ins.opname == "IMPORT_NAME" and ins.argval.split(".")[0] not in _MODULES:
            return False
        if ins.opname == "STORE_DEREF" and ins.argval in code.co_freevars:
            return False
        if ins.opname == "STORE_ATTR":
            loaded = previous.argval if previous is not None and previous.opname.startswith("LOAD_FAST") else None
            if isinstance(loaded, tuple):  # LOAD_FAST_LOAD_FAST (Python 3.13)
                loaded = loaded[-1]
            if ctx is None or loaded != ctx:
                return False
        previous = ins
    return True


class _Same:
    """A value compared by identity (kept alive, so its id is not another's)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def frozen(value: Any) -> Any:
    """An immutable `value` as a key: with its type, so `1`, `1.0` and `True` differ."""
    if isinstance(value, tuple):
        return type(value), tuple(frozen(item) for item in value)
    if isinstance(value, frozenset):
        return frozenset, frozenset(frozen(item) for item in value)
    return type(value), value


def guard(found: Tuple[Read, ...]) -> Tuple[Any, ...]:
    """The values `found` names, now: equal for two calls exactly when they read the same."""
    return tuple(frozen(read.value()) if read.by_value else _Same(read.value()) for read in found)
