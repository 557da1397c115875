"""Errors in user code and PyLayer contract violations point at the user's source."""
import os
import traceback

import pytest

import harness
from conftest import HERE

ERRORS_DIR = os.path.join(HERE, "errors")
MODES = ("eager", "sot", "to_static", "static")


def _load(name: str, transpile):
    path = transpile(os.path.join(ERRORS_DIR, name + ".py"))
    return path, harness.load_module(path, f"e2e_errors_{name}")


def _run(module, mode: str) -> BaseException:
    with pytest.raises(Exception) as info:
        getattr(harness, "run_" + mode)(module, {})
    return info.value


def _line_of(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return number
    raise AssertionError(f"{text!r} not in {path}")


@pytest.mark.parametrize("mode", MODES)
def test_traceback_names_the_raising_user_line(mode: str, transpile) -> None:
    path, module = _load("user_error", transpile)
    line = _line_of(path, 'raise ValueError("user error in forward")')
    exc = _run(module, mode)
    assert isinstance(exc, ValueError) and "user error in forward" in str(exc)
    frames = [(f.filename, f.lineno) for f in traceback.extract_tb(exc.__traceback__)]
    # Eager and SOT run the user's code itself; the AST paths run converted code
    # and report the user's lines in the message, as the framework does.
    in_frames = (path, line) in frames
    in_message = f'File "{path}", line {line}' in str(exc)
    assert in_frames or in_message, f"{path}:{line} neither in {frames} nor in:\n{exc}"


@pytest.mark.parametrize("mode", ("to_static", "static"))
def test_wrong_gradient_count_names_the_class(mode: str, transpile) -> None:
    path, module = _load("wrong_grad_count", transpile)
    exc = _run(module, mode)
    where = f"PyLayer Spread ({path}:{_line_of(path, 'class Spread(PyLayer):')})"
    assert where in str(exc)
    assert "backward returned 3 gradient(s), but forward has 2 tensor input(s)" in str(exc)
