"""Which forward and backward bodies run as written, without dy2static's conversion.

Converting a function (paddle 3.3.1 and 2.6.2 program_translator.py `FunctionCache._convert`:
its source read and parsed, some twenty AST transformers, the result written out, imported
and mapped back to the source lines) costs some 13 ms per function, most of a small PyLayer's
first build, and the converted code then runs every name and call through dy2static's
wrappers. For straight-line code made only of paddle APIs and tensor methods, the conversion
changes nothing: its transformers rewrite control flow (`if`, loops, `and`/`or`/`not`,
conditional expressions), builtins (`len`, `print`, `int`, `range`, ...), `x.shape` (a
dimension unknown when the graph is built becomes a tensor), in-place writes (`x[i] = v`,
which later reads must see) and calls of user functions (converted in turn). A body with
none of these runs the same ops either way, so it runs as written, exactly as eager runs it,
its frames the user's own lines.

A straight-line body that reads `x.shape` (a PyLayer's backward reshaping to its input's
shape, most of them) is one rewrite from that: each read becomes `convert_shape(x)`, as the
conversion's TensorShapeTransformer makes it (paddle 3.3.1 transformers/
tensor_shape_transformer.py, 2.6.2 tensor_shape_transformer.py: every `E.shape` read but
`paddle.shape`; assignments to `.shape` stay as written, `dy2static.py`). `shape_reads`
makes that one rewrite of the parsed body; the compiled function keeps the user's file and
lines (`convert.py`).

The test is conservative: anything it does not know keeps the conversion.
"""
import ast
import functools
import inspect
import textwrap
import types
from typing import Any, Optional, Set

from . import framework

_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return, ast.Pass)
_EXPRESSIONS = (
    ast.Name, ast.Constant, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Tuple,
    ast.List, ast.Dict, ast.Set, ast.Subscript, ast.Slice, ast.Starred, ast.JoinedStr, ast.FormattedValue,
)
# The context's own methods (context.py `StaticContext`), the only calls made on ctx.
_CONTEXT_METHODS = {"save_for_backward", "saved_tensor", "mark_non_differentiable", "mark_not_inplace",
                    "set_materialize_grads"}
# Tensor methods that write, hook or read data, which the conversion or the runtime handles.
_TENSOR_METHODS_CONVERTED = {"register_hook", "set_value", "backward", "numpy", "item", "tolist"}
MODULES = ("paddle", "numpy", "math")
_MAX_SOURCE = 20000  # longer bodies are rare, and not worth parsing twice


@functools.lru_cache(maxsize=None)
def tensor_methods() -> Set[str]:
    return {name for kind in framework.static_types() for name in dir(kind)
            if not name.startswith("_") and name not in _TENSOR_METHODS_CONVERTED and not name.endswith("_")}


def module_of(node: ast.expr, scope: Any) -> Optional[types.ModuleType]:
    """The module `node` (a name, or dotted names) is in `scope` (the function's globals)."""
    if isinstance(node, ast.Name):
        found = scope.get(node.id)
    elif isinstance(node, ast.Attribute):
        outer = module_of(node.value, scope)
        found = getattr(outer, node.attr, None) if outer is not None else None
    else:
        return None
    return found if isinstance(found, types.ModuleType) else None


def _plain_call(call: ast.Call, scope: Any, ctx_name: Optional[str], locals_: Set[str]) -> bool:
    """A call of a paddle (or numpy, math) API, a tensor method, or a method of ctx."""
    if any(keyword.arg in ("out", "output") for keyword in call.keywords):
        return False  # `paddle.assign(y, output=x)` writes x in place
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr.endswith("_"):
        return False  # a function by name (a user's, a builtin), or an in-place API
    module = module_of(func.value, scope)
    if module is not None:
        return module.__name__.split(".")[0] in MODULES and not (func.attr == "assign" and len(call.args) > 1)
    if isinstance(func.value, ast.Name) and func.value.id == ctx_name:
        return func.attr in _CONTEXT_METHODS
    if isinstance(func.value, ast.Name) and func.value.id not in locals_:
        return False  # a method of a global object
    return func.attr in tensor_methods()


def _plain(tree: ast.FunctionDef, scope: Any) -> bool:
    args = tree.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    ctx_name = params[0] if params else None
    locals_ = set(params) | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for statement in tree.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.stmt) and not isinstance(node, _STATEMENTS):
                return False
            if isinstance(node, ast.expr) and not isinstance(node, _EXPRESSIONS):
                return False
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                return False
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                return False
            if isinstance(node, ast.Attribute) and node.attr == "size":
                return False
            if isinstance(node, ast.Call) and not _plain_call(node, scope, ctx_name, locals_):
                return False
    return True


def _reads_shape(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.ctx, ast.Load) \
        and not (isinstance(node.value, ast.Name) and node.value.id == "paddle")


def written_body(fn: types.FunctionType) -> Optional[ast.FunctionDef]:
    """The definition of `fn`, a forward or backward as the user wrote it, parsed (its lines
    those of its file); None when its source cannot be read, or is too long to parse twice."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    if len(source) > _MAX_SOURCE:
        return None
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    tree = module.body[0] if module.body else None
    if not isinstance(tree, ast.FunctionDef) or tree.name != fn.__code__.co_name:
        return None
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
    return tree


def plain_body(fn: types.FunctionType) -> Optional[ast.FunctionDef]:
    """`written_body(fn)` when it runs without the conversion: as written, or with its
    `.shape` reads rewritten (`shape_reads`); None when it needs the conversion (see the
    module docstring)."""
    tree = written_body(fn)
    return tree if tree is not None and _plain(tree, fn.__globals__) else None


SHAPE_NAME = "_p2s_convert_shape"
"""The name `shape_reads` calls `convert_shape` by."""


class _ShapeReads(ast.NodeTransformer):
    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if not _reads_shape(node):
            return node
        return ast.copy_location(ast.Call(ast.Name(SHAPE_NAME, ast.Load()), [node.value], []), node)


LOAD_NAME = "_p2s_convert_load"
"""The name `loads` calls `convert_load` by."""


class _Loads(ast.NodeTransformer):
    """Every name, attribute and item read (but a called function itself) becomes
    `LOAD_NAME(read)`, as the conversion's NameloadJstTransformer makes it (paddle 3.3.1 and
    2.6.2 transformers/name_load_transformer.py): a tensor written in place is then read as the
    latest write left it, an eager tensor as the program's."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute):
            func.value = self.visit(func.value)
        elif not isinstance(func, ast.Name):
            node.func = self.visit(func)
        node.args = [self.visit(arg) for arg in node.args]
        for keyword in node.keywords:
            keyword.value = self.visit(keyword.value)
        return node

    def _loaded(self, node: ast.expr) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(ast.Call(ast.Name(LOAD_NAME, ast.Load()), [node], []), node)

    visit_Name = visit_Attribute = visit_Subscript = _loaded


def loads(tree: ast.FunctionDef) -> None:
    """Rewrite every read of `tree`'s body into `LOAD_NAME(read)` (`_Loads`)."""
    tree.body = [_Loads().visit(statement) for statement in tree.body]


def shape_reads(tree: ast.FunctionDef) -> bool:
    """Rewrite every `E.shape` read of `tree` (a `plain_body`) into `SHAPE_NAME(E)`, as the
    conversion does; whether there was any."""
    if not any(_reads_shape(node) for node in ast.walk(tree)):
        return False
    _ShapeReads().visit(tree)
    return True
