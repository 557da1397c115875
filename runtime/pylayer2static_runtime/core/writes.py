"""Which Python state a forward writes: the first such write, named at the user's line, or None.

Eager runs forward once per call, so its Python side effects (a call counter on the class, a
quantiser's init-once flag, a list of logged calls, a statistics dict) happen once per call,
in call order. A static build runs forward once per call too, at trace time; SOT does not: it
runs a recorded call while it infers its outputs' meta and again when it compiles its graph,
and reuses the first run's meta for later calls alike, so each effect happens once, twice or
not at all per call (`sot.py` keeps such a call out of its graph). This module reads a
function's source (its syntax tree, as written) and says where it writes state that outlives
the call:
- a global or a variable of an enclosing function (`global`, `nonlocal`), assigned or deleted;
- an attribute or item of an object it reaches through a name that is not its own local (a
  class, a module-level dict or object: `Counted.calls += 1`, `SETTINGS["clip"] = c`);
- a method called on such an object, unless it is a container's method that only reads
  (`LOG.append(x)`, `logger.info(...)`, `STATS.update(...)`; `CONFIG.get("k")` reads);
- `print`, `setattr` or `delattr` on what is not its own local, `exec`, `open`, `input`;
- the same in a function it calls by a non-local name (a helper, a class's static or class
  method), followed up to a depth;
- an attribute or item of an argument that is a Python object of the caller's, not a tensor
  (`stats.calls += 1`, `cache[key] = ...` on a dict passed to `apply`): `first_write` is told
  which arguments those are.
What it writes into the context, or its own locals, is the call's own; a tensor argument's
flags are the op's business (`op.py`). Paddle-free: a name's value is looked up in the
function's globals and closure.
"""
import ast
import builtins
import collections
import functools
import inspect
import textwrap
import types
from typing import Any, Dict, NamedTuple, Optional, Set, Tuple

_DEPTH = 4
_CONTAINERS = (list, dict, set, bytearray, collections.deque, collections.OrderedDict,
               collections.defaultdict, collections.Counter)
_READING_METHODS = frozenset({"get", "keys", "values", "items", "copy", "count", "index", "most_common",
                              "__getitem__", "__contains__", "__len__"})
_EFFECT_BUILTINS = frozenset({"print", "exec", "open", "input", "breakpoint"})
_OBJECT_BUILTINS = frozenset({"setattr", "delattr"})  # a write to their first argument


class Write(NamedTuple):
    """One write to Python state: what is written (`Counted.calls`), and where."""

    what: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.what} at {self.path}:{self.line}"


def first_write(fn: Any, objects: Tuple[str, ...] = ()) -> Optional[Write]:
    """The first write to Python state in `fn` (a forward, or a function it calls), or None
    (also when its source cannot be read: no write is claimed that was not seen). `objects`:
    the names of `fn`'s parameters bound to Python objects of the caller's (a dict, a layer),
    whose attributes and items `fn` writes are state too."""
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    if not isinstance(fn, types.FunctionType):
        return None
    found = _first_write(fn, 0, False)
    if found is None:
        found = next((write for name, write in _argument_stores(fn) if name in objects), None)
    return found


@functools.lru_cache(maxsize=None)
def _argument_stores(fn: types.FunctionType) -> Tuple[Tuple[str, Write], ...]:
    """The attributes and items `fn` assigns or deletes on its parameters but the first (the
    context), each with the parameter's name."""
    tree = _parsed(fn)
    if tree is None:
        return ()
    positional = tree.args.posonlyargs + tree.args.args
    parameters = _parameters(tree) - ({positional[0].arg} if positional else set())
    assigned = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    offset = fn.__code__.co_firstlineno - 1
    found = []
    for node in _in_order(tree):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            root = _root(node)
            if root is not None and root.id in parameters and root.id not in assigned:
                found.append((root.id, Write(ast.unparse(node), fn.__code__.co_filename, node.lineno + offset)))
    return tuple(found)


@functools.lru_cache(maxsize=None)
def _first_write(fn: types.FunctionType, depth: int, shared_first: bool) -> Optional[Write]:
    tree = _parsed(fn)
    if tree is None:
        return None
    return _Finder(fn, tree, depth, shared_first).first()


def _parsed(fn: types.FunctionType) -> Optional[ast.AST]:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    node = tree.body[0] if tree.body else None
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node
    return None


def _root(node: ast.expr) -> Optional[ast.Name]:
    """The name an attribute/item/call chain starts from (`a` of `a.b[c].d`), if any."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node if isinstance(node, ast.Name) else None


def _parameters(tree: Any) -> Set[str]:
    """The names of a function's parameters."""
    args = tree.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    return names


def _locals_of(tree: ast.AST) -> Set[str]:
    """The names a function binds itself: its parameters and what it assigns, imports or
    defines, less what it declares `global` or `nonlocal`."""
    names = _parameters(tree)
    declared: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not tree:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)  # a lambda's or comprehension's own
    return names - declared


class _Finder:
    """One function's walk, in source order."""

    def __init__(self, fn: types.FunctionType, tree: Any, depth: int, shared_first: bool) -> None:
        self.fn = fn
        self.tree = tree
        self.depth = depth
        self.own = _locals_of(tree)
        if shared_first and tree.args.args:  # a class method's `cls`: the class, not its own
            self.own.discard(tree.args.args[0].arg)
        self.path = fn.__code__.co_filename
        self.offset = fn.__code__.co_firstlineno - 1  # the source read starts at that line
        self.cells: Dict[str, Any] = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))

    def first(self) -> Optional[Write]:
        for node in _in_order(self.tree):
            found = self._write(node)
            if found is not None:
                return found
        return None

    def _at(self, what: str, node: ast.AST) -> Write:
        return Write(what, self.path, node.lineno + self.offset)

    def _value(self, name: str) -> Any:
        """What a non-local name holds now: a closure cell's value, a global, a builtin."""
        if name in self.cells:
            try:
                return self.cells[name].cell_contents
            except ValueError:
                return _UNBOUND
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return getattr(builtins, name, _UNBOUND)

    def _write(self, node: ast.AST) -> Optional[Write]:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return self._declared_write(node)
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            root = _root(node)
            if root is not None and root.id not in self.own:
                return self._at(ast.unparse(node), node)
            return None
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _declared_write(self, node: Any) -> Optional[Write]:
        for inner in ast.walk(self.tree):
            if isinstance(inner, ast.Name) and inner.id in node.names and isinstance(inner.ctx, (ast.Store, ast.Del)):
                return self._at(inner.id, inner)
        return None

    def _call(self, node: ast.Call) -> Optional[Write]:
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in self.own:
                return None
            value = self._value(func.id)
            if value is getattr(builtins, func.id, _UNBOUND):
                return self._builtin_call(func.id, node)
            return self._followed(value, node)
        if not isinstance(func, ast.Attribute):
            return None
        root = _root(func)
        if root is None or root.id in self.own:
            return None
        owner = self._resolved(func.value)
        if owner is _UNBOUND:
            return None
        if isinstance(owner, (types.ModuleType, type)):
            return self._followed(inspect.getattr_static(owner, func.attr, None), node)
        if isinstance(owner, _CONTAINERS) and func.attr in _READING_METHODS:
            return None
        if isinstance(owner, (types.FunctionType, types.BuiltinFunctionType, int, float, str, bytes, tuple,
                              frozenset, type(None))):
            return None
        return self._at(f"{ast.unparse(func)}(...)", node)

    def _builtin_call(self, name: str, node: ast.Call) -> Optional[Write]:
        if name in _EFFECT_BUILTINS:
            return self._at(f"{name}(...)", node)
        if name in _OBJECT_BUILTINS and node.args:
            root = _root(node.args[0])
            if root is None or root.id not in self.own:
                return self._at(f"{name}({ast.unparse(node.args[0])}, ...)", node)
        return None

    def _resolved(self, node: ast.expr) -> Any:
        """The value of a dotted name (`a.b.c`) outside the function, or `_UNBOUND`."""
        if isinstance(node, ast.Name):
            return self._value(node.id)
        if isinstance(node, ast.Attribute):
            outer = self._resolved(node.value)
            if outer is _UNBOUND:
                return _UNBOUND
            try:
                return inspect.getattr_static(outer, node.attr)
            except AttributeError:
                return _UNBOUND
        return _UNBOUND

    def _followed(self, value: Any, node: ast.Call) -> Optional[Write]:
        """A write inside a Python function the body calls (a static or class method's too)."""
        shared_first = isinstance(value, classmethod)
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if not isinstance(value, types.FunctionType) or self.depth >= _DEPTH or _is_library(value):
            return None
        return _first_write(value, self.depth + 1, shared_first)


def _is_library(fn: types.FunctionType) -> bool:
    """Whether `fn` is the framework's or the language's: its writes are its own business (a
    framework's caches), not the model's state."""
    module = (fn.__module__ or "").split(".")[0]
    return module in {"paddle", "numpy", "functools", "collections", "typing", "math", "builtins"}


def _in_order(tree: ast.AST) -> Tuple[ast.AST, ...]:
    """The nodes of `tree` in source order (line, then column)."""
    nodes = [node for node in ast.walk(tree) if hasattr(node, "lineno")]
    nodes.sort(key=lambda node: (node.lineno, node.col_offset))
    return tuple(nodes)


_UNBOUND = object()
