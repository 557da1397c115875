"""Whose code is running: the one rule for the user's frame, and the user's line.

A frame is the user's when its file is neither the runtime's nor paddle's. Paddle's call
plumbing (its decorators' wrappers, the in-place API wrapper of inplace_utils.py) and the
runtime's own frames are passed through: whoever called through them is asked. The refusals
of eager-only code (`eager_only.py`), of unfollowed in-place APIs (`inplace.py`) and the
`paddle.Tensor` stand-in all ask `called_from_user`, so paddle's own code keeps what it had.
"""
import importlib.util
import os
import sys
import types
from typing import Any, NoReturn, Optional

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


def _users_file(path: str) -> bool:
    return not path.startswith((PADDLE_DIR, RUNTIME_DIR)) and not _passed_through(path)


def accessed_by_user(depth: int) -> bool:
    """Whether the frame `depth` frames above the caller is the user's code itself (not
    paddle's, not the runtime's): for an attribute lookup, whose code looked it up."""
    return _users_file(sys._getframe(depth + 2).f_code.co_filename)


def written_by_user(fn: Any) -> bool:
    """Whether `fn` is a Python function of the user's (or another library's) code, not of
    paddle or the runtime: a method a library patched onto `paddle.Tensor` at import."""
    code = getattr(fn, "__code__", None)
    return isinstance(fn, types.FunctionType) and code is not None and _users_file(code.co_filename)


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
        if not path.startswith((PADDLE_DIR, RUNTIME_DIR, "<")) and "/importlib/" not in path \
                and not _passed_through(path) and os.path.basename(path) not in ("contextlib.py", "functools.py"):
            return f"{path}:{line}"
        frame = frame.f_back
    return None


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
