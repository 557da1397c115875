"""Whose code is running: the one rule for the user's frame, and the user's line.

A frame is the user's when its file is neither the runtime's nor paddle's. Paddle's call
plumbing (its decorators' wrappers, the in-place API wrapper of inplace_utils.py) and the
runtime's own frames are passed through: whoever called through them is asked. The refusals
of eager-only code (`eager_only.py`), of unfollowed in-place APIs (`inplace.py`) and the
`paddle.Tensor` stand-in all ask `called_from_user`, so paddle's own code keeps what it had.
"""
import functools
import importlib.util
import linecache
import os
import re
import sys
import types
from typing import Any, Dict, List, NamedTuple, NoReturn, Optional, Sequence, Tuple

from .core.errors import PyLayerContractError, describe

_PADDLE_SPEC = importlib.util.find_spec("paddle")
PADDLE_DIR = os.path.dirname(_PADDLE_SPEC.origin) + os.sep if _PADDLE_SPEC and _PADDLE_SPEC.origin else "\0"
RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PLUMBING = (os.sep + os.path.join("paddle", "base", "wrapped_decorator.py"),
             os.sep + os.path.join("paddle", "utils", "inplace_utils.py"),
             os.sep + "decorator" + os.sep, "<decorator-gen")


def _passed_through(path: str) -> bool:
    return path.startswith(RUNTIME_DIR) or any(part in path for part in _PLUMBING)


def called_from_user(depth: int) -> bool:
    """Whether the code that called the function `depth` frames above the caller is the
    user's: the first frame from there that is neither the runtime's nor paddle's call
    plumbing is outside paddle."""
    frame = sys._getframe(depth + 2)
    while frame is not None and _passed_through(frame.f_code.co_filename):
        frame = frame.f_back
    return frame is not None and not frame.f_code.co_filename.startswith(PADDLE_DIR)


@functools.lru_cache(maxsize=4096)
def _users(path: str) -> bool:
    """Whether a frame in file `path` is the user's: outside paddle, the runtime, the
    standard library's call plumbing and code made at run time (`<string>`)."""
    return not path.startswith((PADDLE_DIR, RUNTIME_DIR, "<")) and "/importlib/" not in path \
        and not _passed_through(path) and os.path.basename(path) not in ("contextlib.py", "functools.py")


def accessed_by_user(depth: int) -> bool:
    """Whether the frame `depth` frames above the caller is the user's code itself (not
    paddle's, not the runtime's): for an attribute lookup, whose code looked it up."""
    return _users(sys._getframe(depth + 2).f_code.co_filename)


def written_by_user(fn: Any) -> bool:
    """Whether `fn` is a Python function of the user's (or another library's) code, not of
    paddle or the runtime: a method a library patched onto `paddle.Tensor` at import."""
    code = getattr(fn, "__code__", None)
    return isinstance(fn, types.FunctionType) and code is not None and _users(code.co_filename)


def user_line() -> Optional[str]:
    """`file:line` of the innermost user code on the stack: a converted function's frame
    mapped back to its source by dy2static's origin map, or a frame outside paddle and
    the runtime."""
    from paddle.jit.dy2static.origin_info import global_origin_info_map

    frame = sys._getframe(1)
    while frame is not None:
        path, line = frame.f_code.co_filename, frame.f_lineno
        origin = global_origin_info_map.get((path, line))
        if origin is not None:
            return f"{origin.location.filepath}:{origin.location.lineno}"
        if _users(path):
            return f"{path}:{line}"
        frame = frame.f_back
    return None


class _Frame(NamedTuple):
    """One frame of an op's call stack, as the framework keeps it."""

    path: str
    line: int
    name: str
    code: str

    def lines(self) -> List[str]:
        return [f'  File "{self.path}", line {self.line}, in {self.name}', f"    {self.code}"]


# An op's call stack is pairs of lines, as `traceback` prints a frame (paddle 3.3.1 PIR
# `Operation.callstack`, 2.6.2 the `op_callstack` attribute, framework.py `Operator`):
# `  File "PATH", line N, in NAME`, then `    CODE`.
_FRAME_LINE = re.compile(r'\s*File "(?P<path>.*)", line (?P<line>\d+), in (?P<name>.*)$')
_BUILDER_PREFIX = "_p2s_static_"  # the generated builders' names (src/plan.c)


# Every op of a body repeats the frames above it: each frame is read once (a body's
# callstacks were a tenth of its build time).
@functools.lru_cache(maxsize=65536)
def _frame(head: str, code: str) -> Optional[_Frame]:
    match = _FRAME_LINE.match(head)
    return None if match is None else _Frame(match["path"], int(match["line"]), match["name"], code.strip())


def _parsed(callstack: Sequence[str]) -> Optional[List[_Frame]]:
    if len(callstack) % 2:
        return None
    frames = [_frame(head, code) for head, code in zip(callstack[::2], callstack[1::2])]
    return None if None in frames else frames


def _as_written(frame: _Frame, origins: Dict[Tuple[str, int], Any]) -> _Frame:
    """`frame`, a converted function's mapped back to the user's source by dy2static's
    origin map `origins` (as the framework maps a to_static program's ops, origin_info.py
    `update_op_callstack_with_origin_info`, which a backward built after it misses)."""
    origin = origins.get((frame.path, frame.line))
    return frame if origin is None else _Frame(*origin.as_frame())


def caller_frames(depth: int) -> List[types.FrameType]:
    """The frames from the outermost to the one `depth` frames above the caller."""
    found = []
    frame = sys._getframe(depth + 1)
    while frame is not None:
        found.append(frame)
        frame = frame.f_back
    found.reverse()
    return found


def stack_entries(frames: Sequence[types.FrameType]) -> List[Tuple[str, int, str, str]]:
    """`frames` (outermost first) as `traceback.extract_stack` gives them: path, line, function,
    source line."""
    return [(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name,
             linecache.getline(frame.f_code.co_filename, frame.f_lineno, frame.f_globals).strip())
            for frame in frames]


_OUTERS_KEPT = 4096
_outers: Dict[Tuple[Any, ...], Tuple[str, ...]] = {}
"""The lines above the call of each stack `outer_callstack` met, by its frames' code and line
(a cache, cleared when it holds `_OUTERS_KEPT`)."""


def outer_callstack() -> Tuple[str, ...]:
    """The lines the call stack of each op a body builds now begins with (`user_frames`): the
    frames above the runtime's first one, as the framework keeps (and maps) them, and the
    user's below it down to the call (a to_static model's converted `forward`, under
    dy2static's program build, which the runtime wraps); none when the stack does not pass
    through the runtime."""
    found = caller_frames(1)
    key = tuple((frame.f_code, frame.f_lineno) for frame in found)
    lines = _outers.get(key)
    if lines is None:
        kept = _kept_frames(stack_entries(found))
        if len(_outers) >= _OUTERS_KEPT:
            _outers.clear()
        lines = _outers[key] = tuple(line for frame in (kept[0] if kept else []) for line in frame.lines())
    return lines


class RecordedStacks:
    """The call stacks of a recorded body's ops, each past the lines down to the call it was
    built in (`outer_callstack` then), so that a replay for another call gives each op that
    call's own lines (`for_call`)."""

    __slots__ = ("outer", "tails", "restackable")

    def __init__(self) -> None:
        self.outer = outer_callstack()
        self.tails: List[Optional[List[str]]] = []  # None: the op has no stack
        self.restackable = True
        """Whether every stack begins with `outer` (one the runtime built outside the body may
        not): else only a call from the same stack can replay the body."""

    def add(self, stack: List[str]) -> None:
        """Record the next op's stack."""
        if stack and tuple(stack[:len(self.outer)]) != self.outer:
            self.restackable = False
        self.tails.append(stack[len(self.outer):] if stack else None)

    def for_call(self) -> List[Optional[List[str]]]:
        """Each op's stack for the call being built now: None where the recorded one is it."""
        outer = outer_callstack()
        if outer == self.outer:
            return [None] * len(self.tails)
        return [None if tail is None else list(outer) + tail for tail in self.tails]


def user_callstack(callstack: List[str], cls: type, method: str) -> Optional[List[str]]:
    """The call stack of an op built in `cls.<method>`, as the user wrote the code: None when
    it does not pass through the runtime (not one of ours, or rewritten already).

    Each stack is rewritten once: the ops a line of a body builds share it, and so do the
    ops of each call of a class a model makes from one line (a loop over its blocks).
    """
    rewritten = _user_callstack(tuple(callstack), cls, method)
    return None if rewritten is None else list(rewritten)


@functools.lru_cache(maxsize=4096)
def _user_callstack(callstack: Tuple[str, ...], cls: type, method: str) -> Optional[Tuple[str, ...]]:
    """`user_callstack`, of a stack as a tuple."""
    if not any(RUNTIME_DIR in line for line in callstack):
        return None
    frames = user_frames(_parsed(callstack) or (), cls, method)
    return None if frames is None else tuple(line for frame in frames for line in frame.lines())


def user_frames(frames: Sequence[Tuple[str, int, str, str]], cls: type, method: str) -> Optional[List[_Frame]]:
    """The call stack `frames` (outermost first: path, line, function, source line, as
    `traceback.extract_stack` gives them) of an op built in `cls.<method>`, as the user wrote
    the code: None when it does not pass through the runtime.

    The framework prints an op's call stack when the op fails at run time (a shape mismatch,
    an index out of range, `FLAGS_check_nan_inf`). Between the `apply` call and the body,
    that stack is the runtime's and paddle's building (`apply`, the generated builder,
    `static_pylayer`, the op's steps), and the body itself is dy2static's converted code in a
    temporary file. Here those frames go, the body's are mapped to the user's source, and the
    frame of `method` is named `method of PyLayer Class` (in the frame's own line, as
    to_static's error report keeps only frames). The frames around, above the call and below
    the body (the paddle API that built the op), stay as the framework keeps them.
    """
    found = _kept_frames(frames)
    if found is None:
        return None
    kept, between, body = found
    named = _method_frame(kept, between, body, method)
    if named is not None:
        kept[named] = kept[named]._replace(name=f"{method} of PyLayer {getattr(cls, '__qualname__', cls)}")
    return kept


def _kept_frames(frames: Sequence[Tuple[str, int, str, str]]) -> Optional[Tuple[List[_Frame], List[int], List[int]]]:
    """The frames of `frames` `user_frames` keeps, and which of them are the user's between the
    call and the body, and the body's: None when the stack does not pass through the runtime."""
    from paddle.jit.dy2static.origin_info import global_origin_info_map

    ours = [i for i, frame in enumerate(frames) if frame[0].startswith(RUNTIME_DIR)]
    if not ours:
        return None
    first, last = ours[0], ours[-1]
    kept: List[_Frame] = []
    between: List[int] = []  # in `kept`, the user's frames between the call and the body
    body: List[int] = []  # and the body's (past the runtime's last frame)
    for index, frame in enumerate(_as_written(_Frame(*frame), global_origin_info_map) for frame in frames):
        if index < first:  # above the call: as the framework keeps (and maps) it
            kept.append(frame)
            continue
        users = _users(frame.path) and not frame.name.startswith(_BUILDER_PREFIX)
        if index <= last and not users:
            continue
        if users:
            (body if index > last else between).append(len(kept))
        kept.append(frame)
    return kept, between, body


def _method_frame(kept: List[_Frame], between: List[int], body: List[int], method: str) -> Optional[int]:
    """Which of `kept` is `method` itself: the body's frame of that name (its first: the
    user's function, before what it calls), else the innermost such frame between the call
    and the body (an op the runtime built for a line of the body, as an in-place write),
    else the body's first frame."""
    named = [i for i in body if kept[i].name == method] or [i for i in between[::-1] if kept[i].name == method]
    return named[0] if named else (body[0] if body else None)


def refusal(cls: type, method: str, message: str, kind: type = PyLayerContractError) -> PyLayerContractError:
    """`cls.<method>` refused, at the user's line: `message` says what it did and what to do
    (`kind`: a subclass of PyLayerContractError)."""
    where = user_line()
    at = f" at {where}" if where else ""
    return kind(f"PyLayer {describe(cls)}: {method}{at} {message}")


def reraise_with_user_lines(exc: BaseException) -> NoReturn:
    """Re-raise `exc`, raised while building outside to_static, naming the user's lines.

    Forward and backward run converted by dy2static, so their frames are in
    generated files. Under to_static the framework maps those frames back to the
    user's source; elsewhere (pure static programs) this does the same with the
    framework's own machinery (paddle 3.3.1 and 2.6.2 jit/dy2static/error.py,
    as used by program_translator.py).
    """
    from paddle.base.dygraph.base import in_to_static_mode
    from paddle.jit.dy2static import error

    if in_to_static_mode() or isinstance(exc, PyLayerContractError) or hasattr(exc, error.ERROR_DATA):
        raise exc
    error.attach_error_data(exc)
    getattr(exc, error.ERROR_DATA).raise_new_exception()
    raise exc
