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

paddle's static collectives also refuse a `group` ("Group can not be used in static graph mode
for now": an assertion in each public function of stream/*.py, 3.3.1 and 2.6.2), so a
model-parallel PyLayer passing its model-parallel group, as fleet-style code does, cannot be
built either. In 3.3.1 that assertion is all there is: the static-mode functions build the op
on the group's ring (`ring_id = group.id`), and a group made by `dist.new_group` in eager mode
has its communicator at run time. So in PIR programs `all_reduce`, `all_gather` and
`alltoall` with a group go straight to their static-mode functions (after the member check the
public function makes). The legacy IR keeps the assertion: 2.6.2 runs CPU collectives of static
programs through one gloo context, whatever the ring.
"""
import functools
import importlib
import inspect
from typing import Any, Callable, List

from .. import patch

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


_REPLACED = {  # module of paddle.distributed.communication.stream: (patch, function, PIR builder, list arguments)
    "all_gather": ("pir.collectives.all_gather_in_static_mode", "_all_gather_in_static_mode", _pir_all_gather, 1),
    "all_to_all": ("pir.collectives.all_to_all_in_static_mode", "_all_to_all_in_static_mode", _pir_all_to_all, 2),
}


def _with_group(public: Callable[..., Any], module: Any, function: str, arity: int, lists: int) -> Callable[..., Any]:
    """`public` (a collective of `dist.stream`), taking a group in PIR programs: the call goes to
    `module.function` (its static-mode function) with the first `arity` arguments, when the first
    `lists` of them are lists (the forms static graphs accept)."""
    signature = inspect.signature(public)

    @functools.wraps(public)
    def collective(*args: Any, **kwargs: Any) -> Any:
        import paddle
        from paddle.base.framework import in_pir_mode

        if paddle.in_dynamic_mode() or not in_pir_mode():
            return public(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        group = bound.arguments["group"]
        call = bound.args[:arity]
        if group is None or not all(isinstance(a, list) for a in call[:lists]):
            return public(*args, **kwargs)
        if not group.is_member():  # as the public function: nothing to do on this rank
            return None
        return getattr(module, function)(*call)

    return collective


_GROUPED = {  # dist.stream function: (patch, its module, its static-mode function, arity, list arguments)
    "all_reduce": ("pir.collectives.stream.all_reduce", "all_reduce", "_all_reduce_in_static_mode", 5, 0),
    "all_gather": ("pir.collectives.stream.all_gather", "all_gather", "_all_gather_in_static_mode", 4, 1),
    "alltoall": ("pir.collectives.stream.alltoall", "all_to_all", "_all_to_all_in_static_mode", 5, 2),
}


def install() -> None:
    """Make the list forms of all_gather and alltoall build in PIR programs, and all_reduce,
    all_gather and alltoall take a group there (once per process)."""
    for module_name, (key, function, pir, lists) in _REPLACED.items():
        module = importlib.import_module(f"{_STREAM}.{module_name}")
        patch.install(key, module, function,
                      functools.partial(_in_pir, pir=pir, lists=lists))
    stream = importlib.import_module(_STREAM)
    for name, (key, module_name, function, arity, lists) in _GROUPED.items():
        module = importlib.import_module(f"{_STREAM}.{module_name}")
        patch.install(key, stream, name,
                      functools.partial(_with_group, module=module, function=function, arity=arity, lists=lists))
