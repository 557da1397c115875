"""Where the framework's internals are on each release: every version probe of the runtime.

The runtime reads and patches internals of PaddlePaddle that move between releases. Each
such difference is answered here, once, by what the installed framework has (never by its
version number); the rest of the runtime asks this module, so a branch on the framework's
release is here, in the patch table (`patch.py`) or in one IR's package (`pir/`, `legacy/`).
"""
import functools
from typing import Any, Callable, FrozenSet, List, Optional, Tuple


@functools.lru_cache(maxsize=None)
def has_pir() -> bool:
    """Whether the framework builds PIR programs with pylayer ops (paddle 3.x; not 2.6.2,
    whose `paddle.pir` has no `build_pipe_for_pylayer`)."""
    try:
        from paddle.base.libpaddle.pir import build_pipe_for_pylayer  # noqa: F401  paddle 3.3.1
    except ImportError:
        return False
    return True


@functools.lru_cache(maxsize=None)
def static_types() -> Tuple[type, ...]:
    """The classes of a static graph's tensors: the legacy IR's, and PIR's where it exists
    (`import paddle` imports both: paddle 3.3.1 and 2.6.2 python/paddle/__init__.py)."""
    import paddle
    from paddle.base.framework import Variable

    kinds = [Variable]
    if hasattr(paddle, "pir") and hasattr(paddle.pir, "Value"):
        kinds.append(paddle.pir.Value)
    return tuple(kinds)


def block_ops_named(names: FrozenSet[str]) -> List[str]:
    """The ops of the block being built (either IR) whose name, without its dialect and in-place
    mark (`dropout`), is one of `names`, but those in test mode (`is_test`, dropout in eval):
    a recompute's run is checked for random ops (`recompute.py`)."""
    import paddle

    if paddle.framework.in_pir_mode():
        ops = [(op.name().split(".", 1)[-1], op.attrs()) for op in paddle.pir.get_current_insertion_point().block().ops]
    else:
        ops = [(op.type, {"is_test": op.attr("is_test")} if op.has_attr("is_test") else {})
               for op in paddle.static.default_main_program().current_block().ops]
    return [name for name, attrs in ops if name.rstrip("_") in names and not attrs.get("is_test", False)]


@functools.lru_cache(maxsize=None)
def parameter_recorder() -> Any:
    """The PIR module of dy2static's per-program records: paddle 3.3.1 keeps it in
    jit/dy2static, 2.6.2 to 3.2.2 in jit/pir_dy2static. Found once: on 2.6.2 the failed first
    import searched the path again at every in-place map lookup (some 35 µs each)."""
    try:
        from paddle.jit.dy2static import parameter_recorder as module
    except ImportError:
        from paddle.jit.pir_dy2static import parameter_recorder as module
    return module


def tensor_shape_transformer() -> type:
    """dy2static's `TensorShapeTransformer` (paddle 3.3.1 transformers/, 2.6.2 dy2static/)."""
    try:
        from paddle.jit.dy2static.transformers.tensor_shape_transformer import TensorShapeTransformer
    except ImportError:  # paddle 2.6.2
        from paddle.jit.dy2static.tensor_shape_transformer import TensorShapeTransformer
    return TensorShapeTransformer


def converts_closures() -> bool:
    """Whether dy2static's `ast_to_func` gives a converted function its original's closure
    (paddle 3.x `utils.wrap_as_closure`; 2.6.2 drops it)."""
    from paddle.jit.dy2static import utils as dy2static_utils

    return hasattr(dy2static_utils, "wrap_as_closure")


@functools.lru_cache(maxsize=None)
def sot_unified_marker() -> Optional[Callable[..., Any]]:
    """`paddle.jit.marker.unified` where SOT also has every internal the runtime records
    PyLayer calls with (read from paddle 3.3.1: jit/marker.py, jit/sot/infer_meta.py,
    jit/sot/opcode_translator/executor/guard.py, opcode_executor.py, tracker.py, variables/callable.py,
    base.py and basic.py, jit/sot/symbolic/compile_cache.py and statement_ir.py,
    jit/sot/utils/exceptions.py, jit/dy2static/utils.py), else None."""
    import paddle

    unified = getattr(getattr(paddle.jit, "marker", None), "unified", None)
    if unified is None:
        return None
    try:
        from paddle.jit.sot.infer_meta import InferMetaCache, VariableCreator  # noqa: F401
        from paddle.jit.sot.opcode_translator.executor.opcode_executor import OpcodeExecutorBase  # noqa: F401
        from paddle.jit.sot.opcode_translator.executor.tracker import DummyTracker  # noqa: F401
        from paddle.jit.sot.opcode_translator.executor.guard import (  # noqa: F401
            StringifiedExpression, check_guard, object_equal_stringified_guard, union_free_vars)
        from paddle.jit.sot.opcode_translator.executor.variables.callable import (  # noqa: F401
            MethodVariable, PartialVariable)
        from paddle.jit.sot.utils.exceptions import BreakGraphError, DygraphInconsistentWithStaticBreak  # noqa: F401
        from paddle.jit.dy2static.utils import graph_tracing_guard  # noqa: F401
        from paddle.jit.sot.opcode_translator.executor.variables.base import VariableBase, VariableFactory  # noqa: F401
        from paddle.jit.sot.opcode_translator.executor.variables.basic import ParameterVariable  # noqa: F401
        from paddle.jit.sot.symbolic.compile_cache import compile_sir  # noqa: F401
        from paddle.jit.sot.symbolic.statement_ir import ParametersHolder  # noqa: F401
    except ImportError:
        return None
    return unified


def sot_force_dynamic() -> Optional[Callable[..., Any]]:
    """`paddle.jit.marker.force_dynamic` (SOT breaks the graph at a function so marked), else None."""
    import paddle

    return getattr(getattr(paddle.jit, "marker", None), "force_dynamic", None)
