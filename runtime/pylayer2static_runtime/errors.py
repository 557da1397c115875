"""Errors that name the user's PyLayer class and where it is defined."""
import inspect


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
    """A PyLayer breaks the PyLayer contract in a way found while building the static graph."""

    def __init__(self, cls: type, message: str) -> None:
        self.layer = cls
        super().__init__(f"PyLayer {describe(cls)}: {message}")
