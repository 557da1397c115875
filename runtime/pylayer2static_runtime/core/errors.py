"""Errors that name the user's PyLayer class and where it is defined."""
import functools
import inspect
import sys
from typing import Any, Optional


def describe(cls: type) -> str:
    """`Name (file:line)` for a PyLayer class, as precise as `inspect` allows."""
    name = getattr(cls, "__qualname__", getattr(cls, "__name__", repr(cls)))
    try:
        path = inspect.getsourcefile(cls)
        line = inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return f"{name} (module {getattr(cls, '__module__', '?')})"
    return f"{name} ({path}:{line})"


class PyLayerContractError(ValueError):
    """A PyLayer breaks the PyLayer contract in a way found while building the static graph.

    Constructed from the message alone, so the framework's dy2static error
    reporting (which re-creates an error from its type and message) keeps it.
    """


class EagerOnlyAttributeError(PyLayerContractError, AttributeError):
    """A `PyLayerContractError` for an attribute a static value lacks: an AttributeError too,
    so `hasattr(x, name)` and `getattr(x, name, default)` in a body answer as they did."""


def where(fn: Any) -> Optional[str]:
    """`file:line` of the `def` of `fn` (through decorators), or None."""
    try:
        fn = inspect.unwrap(fn)
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError, ValueError):
        return None
    # `getsourcelines` starts at the first decorator: name the `def` line itself.
    offset = next((i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))), 0)
    try:
        return f"{inspect.getsourcefile(fn)}:{start + offset}"
    except (OSError, TypeError, ValueError):
        return None


def contract_error(cls: type, message: str, method: Optional[str] = None) -> PyLayerContractError:
    """A `PyLayerContractError` whose message starts with the class and its location and,
    given `method` ("forward" or "backward"), ends with where that method is defined."""
    text = f"PyLayer {describe(cls)}: {message}"
    location = where(getattr(cls, method, None)) if method else None
    if location:
        text += f" ({method} is defined at {location})"
    return PyLayerContractError(text)


def _imported_class(path: str) -> Optional[type]:
    """The class `module.qualname` names (as ops carry it), from a module already imported."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            try:
                return functools.reduce(getattr, parts[cut:], module)
            except AttributeError:
                return None
    return None


def aliased_write_error(class_path: str, argument: Optional[int], writer: str) -> PyLayerContractError:
    """The error for a program that writes in place, after a call of PyLayer `class_path`,
    the input `argument` (1-based; None: not an input) that forward returned as it is, or
    that output; `writer` names the writing op."""
    which = f"its input {argument}" if argument is not None else "a tensor it did not make"
    message = (
        f"forward returns {which} as it is, and the program writes it (or that output) in place after "
        f"the call ({writer}); eager's output is then the input tensor itself, so the write changes both, "
        "while a static graph's output is a tensor of its own, and the results would differ: return a "
        "copy from forward (x.clone()), or write into a copy"
    )
    return _error_of(class_path, message, "forward")


def double_backward_error(class_path: str, line: Optional[str]) -> PyLayerContractError:
    """The error for a gradient asked, at the user's `line`, through the backward of PyLayer
    `class_path` (the op autodiff made of it), on the legacy Program IR."""
    at = f" at {line}" if line else ""
    message = (
        f"a gradient of a gradient (paddle.grad with create_graph=True, then a gradient of its result){at} "
        "goes through this PyLayer's backward, which the legacy Program IR (paddle 2.6) cannot differentiate: "
        "its pylayer_grad op has no gradient op, whoever built it; eager mode and paddle 3.x static graphs can: "
        "take the second gradient in eager mode or on paddle 3.x, or write the computation without a PyLayer"
    )
    return _error_of(class_path, message, "backward")


def _error_of(class_path: str, message: str, method: str) -> PyLayerContractError:
    """`contract_error` for the class an op names (`module.qualname`), or, where that class is
    not imported, an error naming the path."""
    cls = _imported_class(class_path)
    if cls is None:
        return PyLayerContractError(f"PyLayer {class_path}: {message}")
    return contract_error(cls, message, method)
