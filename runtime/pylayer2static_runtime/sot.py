"""How the bytecode translator (SOT) treats the runtime.

SOT simulates the user's function and inlines the Python functions it calls. A
PyLayer call cannot be traced (the framework's SOT has no PyLayer support), so the
graph breaks at it and the call runs eagerly, exactly as `cls.apply(...)` does in
unconverted code. Two things make that break clean:

- `apply` is a "break graph" function (paddle 3.3.1 `paddle.jit.marker.force_dynamic`):
  SOT breaks at its call site instead of simulating it (2.6.2 has no such marker:
  simulating it reaches `cls.apply`, which breaks the graph at the same call site);
- the eager call runs with SOT's frame evaluation off (`run_eagerly`), so the user's
  forward runs natively inside `cls.apply`, as in eager mode; 2.6.2's SOT otherwise
  translates that frame too and fails on e.g. a `for` over `*args` (it does so for
  unconverted code as well);
- the runtime's files are in SOT's skip list (paddle 3.3.1 and 2.6.2
  `paddle/jit/sot/opcode_translator/skip_files.py`), so the eagerly run call is not
  translated again as a new frame. Without this, 2.6.2 translates `apply` itself and
  replays a cached resume function of it with another call's keyword arguments.
"""
import os
from typing import Any, Callable


def run_eagerly(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` with SOT's frame evaluation switched off meanwhile
    (as paddle 3.3.1 and 2.6.2 `paddle.jit.sot.utils.no_eval_frame` do)."""
    import paddle

    previous = paddle.framework.core.set_eval_frame(None)
    try:
        return fn(*args, **kwargs)
    finally:
        paddle.framework.core.set_eval_frame(previous)


def skip_runtime_files() -> None:
    """Have SOT run the runtime's frames natively, like the framework's own files."""
    from paddle.jit.sot.opcode_translator import skip_files

    skip_files.skip_file_names.add(os.path.dirname(os.path.abspath(__file__)) + os.sep)
    skip_files.setup_skip_files()


def break_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark `fn` so SOT breaks the graph at calls of it (where the framework can)."""
    import paddle.jit

    force_dynamic = getattr(getattr(paddle.jit, "marker", None), "force_dynamic", None)
    if force_dynamic is not None:
        force_dynamic(fn)
    return fn
