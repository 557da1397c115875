"""Whether a backward re-runs forward (recompute): it turns grad mode on or differentiates.

A recompute PyLayer (a `CheckpointFunction`, fleet's `RecomputeFunction`) keeps only its
inputs and runs forward again in backward, under `paddle.enable_grad()`, then takes
`paddle.grad` of that re-run. Its backward's first ops read nothing but saved tensors, so an
executor may start them as soon as forward is done, all blocks at once, and the memory the
recompute was for is spent anyway (`op.py` orders them after the output gradients). This module
reads a backward's syntax tree, as written, and says whether it does that: it calls
`enable_grad`, `set_grad_enabled`, `grad` (`paddle.grad`, `paddle.autograd.grad`) or sets a
tracer's `_has_grad`. Paddle-free; a backward whose source cannot be read is taken as not.
"""
import ast
import functools
import inspect
import textwrap
from typing import Any

_CALLS = frozenset({"enable_grad", "set_grad_enabled", "grad"})
_FLAGS = frozenset({"_has_grad"})


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _turns_grad_on(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _last_name(node.func) in _CALLS:
            return True
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_last_name(target) in _FLAGS for target in targets):
                return True
    return False


@functools.lru_cache(maxsize=None)
def _reruns(code: Any) -> bool:
    try:
        source = textwrap.dedent(inspect.getsource(code))
    except Exception:  # noqa: BLE001 - inspect walks sys.modules, whose lazy modules raise anything
        return False
    try:
        return _turns_grad_on(ast.parse(source))
    except SyntaxError:
        return False


def reruns_forward(backward: Any) -> bool:
    """Whether `backward` (a function, or a static/class method) turns grad mode on or takes
    a gradient itself, as a recompute backward does."""
    fn = inspect.unwrap(getattr(backward, "__func__", backward))
    code = getattr(fn, "__code__", None)
    return code is not None and _reruns(code)
