"""`paddle.distributed` collectives that fill a Python list, in PIR programs.

`dist.all_gather(tensor_list, x)` is the only form of all_gather paddle accepts in a static
graph ("Only support passing a tensor list to `all_gather` in static graph mode now"), but
paddle 3.3.1 builds it with the legacy Program IR's `LayerHelper.append_op`
(python/paddle/distributed/communication/stream/all_gather.py `_all_gather_in_static_mode`)
also while a PIR program is being built, where that fails: "TypeError: The type of '%x' in
operator all_gather should be one of [str, bytes, Variable]. but received : Value(...)". So
under `to_static` (and in PIR `enable_static` programs) a model-parallel PyLayer whose
forward or backward all-gathers into a list cannot be built, by the framework's own
dy2static PyLayer path or by anyone else.

`install` replaces that module function by one that builds PIR's own `pd_op.all_gather`
(`paddle._C_ops.all_gather(x, ring_id, nranks)`, the op `paddle.distributed` uses for a
gathered tensor) and fills the list with its `nranks` slices along axis 0, as the legacy
function does (`unstack` for a 0-D tensor). Every entry point that reaches it is covered:
`dist.all_gather`, `dist.stream.all_gather`, names imported from either. Outside PIR
(paddle 2.6.2, or 3.x with PIR off) the framework's own function runs unchanged; in dynamic
mode the function is never reached.
"""
import functools
import importlib
from typing import Any, Callable, List

_MODULE = "paddle.distributed.communication.stream.all_gather"
_FUNCTION = "_all_gather_in_static_mode"


def _pir_all_gather(tensor_list: List[Any], tensor: Any, group: Any) -> None:
    import paddle
    import paddle.distributed as dist
    from paddle import _C_ops

    ring_id = 0 if group is None else group.id
    nranks = dist.get_world_size() if group is None else group.nranks
    scalar = len(tensor.shape) == 0
    gathered = _C_ops.all_gather(paddle.reshape(tensor, [1]) if scalar else tensor, ring_id, nranks)
    tensor_list.clear()
    tensor_list.extend(paddle.unstack(gathered, 0) if scalar else paddle.split(gathered, nranks, 0))


def _static_all_gather(legacy: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(legacy)
    def all_gather_in_static_mode(tensor_list: List[Any], tensor: Any, group: Any, sync_op: bool) -> None:
        from paddle.base.framework import in_pir_mode

        if not in_pir_mode():
            return legacy(tensor_list, tensor, group, sync_op)
        return _pir_all_gather(tensor_list, tensor, group)

    all_gather_in_static_mode._p2s_legacy = legacy  # type: ignore[attr-defined]
    return all_gather_in_static_mode


def install() -> None:
    """Make `dist.all_gather(tensor_list, x)` build in PIR programs (once per process)."""
    module = importlib.import_module(_MODULE)
    current = getattr(module, _FUNCTION)
    if not hasattr(current, "_p2s_legacy"):
        setattr(module, _FUNCTION, _static_all_gather(current))
