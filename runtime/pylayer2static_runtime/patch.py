"""`swapped`: a framework attribute replaced while a block runs, then restored."""
import contextlib
from typing import Any, Iterator


@contextlib.contextmanager
def swapped(owner: Any, name: str, value: Any) -> Iterator[None]:
    """`owner.name` is `value` inside the block and what it was after it, however it ends."""
    previous = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, previous)
