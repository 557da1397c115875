"""`paddle.distributed` collectives that fill a Python list, in PIR programs.

`dist.all_gather(tensor_list, x)` is the only form of all_gather paddle accepts in a static
graph ("Only support passing a tensor list to `all_gather` in static graph mode now"), and
`dist.alltoall(out_tensor_list, in_tensor_list)` the usual form of all-to-all, but paddle
3.3.1 builds both with the legacy Program IR's `LayerHelper.append_op`
(python/paddle/distributed/communication/stream/all_gather.py `_all_gather_in_static_mode`,
stream/all_to_all.py `_all_to_all_in_static_mode`) also while a PIR program is being built,
where that fails: "TypeError: The type of '%x' in operator all_gather should be one of [str,
bytes, Variable]. but received : Value(...)". So under `to_static` (and in PIR `enable_static`
programs) a model-parallel PyLayer whose forward or backward gathers into a list cannot be
built, by the framework's own dy2static PyLayer path or by anyone else.

`install` replaces those module functions by ones that build PIR's own ops, the ones the
legacy ops translate to (`paddle._C_ops.all_gather(x, ring_id, nranks)`,
`paddle._C_ops.all_to_all(x, ring_id)`), with the legacy functions' packing: the input list
concatenated along axis 0 (stacked for 0-D tensors), the output split into `nranks` slices
along axis 0 (unstacked for 0-D). Every entry point that reaches them is covered:
`dist.all_gather`, `dist.alltoall`, their `dist.stream` versions, names imported from any of
them. Outside PIR (paddle 2.6.2, or 3.x with PIR off), and for an all-to-all into a tensor
(which PIR cannot write into), the framework's own function runs unchanged; in dynamic mode
they are never reached.
"""
import functools
import importlib
from typing import Any, Callable, List

_STREAM = "paddle.distributed.communication.stream"


def _nranks(group: Any) -> int:
    import paddle.distributed as dist

    return dist.get_world_size() if group is None else group.nranks


def _ring_id(group: Any) -> int:
    return 0 if group is None else group.id


def _slices(gathered: Any, nranks: int, scalar: bool) -> List[Any]:
    import paddle

    return paddle.unstack(gathered, 0) if scalar else paddle.split(gathered, nranks, 0)


def _pir_all_gather(tensor_list: List[Any], tensor: Any, group: Any, sync_op: bool) -> None:
    import paddle
    from paddle import _C_ops

    scalar = len(tensor.shape) == 0
    gathered = _C_ops.all_gather(paddle.reshape(tensor, [1]) if scalar else tensor, _ring_id(group), _nranks(group))
    tensor_list.clear()
    tensor_list.extend(_slices(gathered, _nranks(group), scalar))


def _pir_all_to_all(out_list: List[Any], in_list: List[Any], group: Any, sync_op: bool, use_calc_stream: bool) -> None:
    import paddle
    from paddle import _C_ops

    if not in_list:
        raise RuntimeError("The input tensor_list should not be empty.")  # the legacy function's check
    if out_list:
        raise ValueError("The 'out_tensor_list' for all_to_all must be an empty list.")
    scalar = len(in_list[0].shape) == 0
    packed = paddle.stack(in_list, axis=0) if scalar else paddle.concat(in_list, axis=0)
    out_list.extend(_slices(_C_ops.all_to_all(packed, _ring_id(group)), _nranks(group), scalar))


def _in_pir(legacy: Callable[..., None], pir: Callable[..., None], lists: int) -> Callable[..., None]:
    """`pir` in PIR programs when the first `lists` arguments are lists, else `legacy`."""

    @functools.wraps(legacy)
    def static_mode(*args: Any) -> None:
        from paddle.base.framework import in_pir_mode

        if in_pir_mode() and all(isinstance(a, list) for a in args[:lists]):
            return pir(*args)
        return legacy(*args)

    static_mode._p2s_legacy = legacy  # type: ignore[attr-defined]
    return static_mode


_REPLACED = {  # module of paddle.distributed.communication.stream: (function, PIR builder, list arguments)
    "all_gather": ("_all_gather_in_static_mode", _pir_all_gather, 1),
    "all_to_all": ("_all_to_all_in_static_mode", _pir_all_to_all, 2),
}


def install() -> None:
    """Make the list forms of all_gather and alltoall build in PIR programs (once per process)."""
    for module_name, (function, pir, lists) in _REPLACED.items():
        module = importlib.import_module(f"{_STREAM}.{module_name}")
        current = getattr(module, function)
        if not hasattr(current, "_p2s_legacy"):
            setattr(module, function, _in_pir(current, pir, lists))
