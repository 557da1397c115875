"""Training a PIR export after `paddle.jit.load`, in a fresh process too (paddle 3.x).

An export holds each PyLayer call's forward ops inlined (`export.py`); autodiff of them would
differ from the custom backward silently (a straight-through quantizer's gradient would be
round's: zero). So training a loaded model (`rebuild_calls`, from `hooks.py`'s hook on
`PartialProgramLayer._append_backward`, before autodiff) replaces each marked run of the
training program whose record is known by the call built again as a pylayer op on the run's
inputs (the class imported by name: a loud error naming the module when it cannot be), last
run first, so the ops before a run are still as saved when its inputs are looked up. What
stays marked is refused (`hooks.py` `_refuse_inlined_training`).

Read from paddle 3.3.1: jit/pir_translated_layer.py (`_run_dygraph` trains a loaded program
through `PartialProgramLayer`) and jit/dy2static/pir_partial_program.py (`_create_program`
clones the loaded program and calls `_append_backward` on the clone).
"""
from typing import Any, Callable, Dict, List

import paddle

from .. import builders
from ..core import records, structure
from ..core.errors import PyLayerContractError
from .ops import PYLAYER, forget_values
from .export import call_key


def _input(listed: List[Any], start: int, run: List[Any], where: Dict[str, Any], mismatch: Callable[[], Exception]) -> Any:
    if "op" in where:
        return run[where["op"]].operand_source(where["operand"])
    maker = listed[start - where["back"]] if where["back"] <= start else None
    if maker is None or maker.name() != where["name"]:
        raise mismatch()
    return maker.result(where["result"])


def _rebuild(program: Any, key: str, record: Dict[str, Any]) -> None:
    """Replace call `key`'s run of ops in `program` by the call, built as a pylayer op."""
    cls_name = ".".join(record["class"])
    if "why" in record:
        raise PyLayerContractError(
            f"this model loaded by paddle.jit.load cannot be trained: pylayer2static could not record "
            f"a call of PyLayer {cls_name} when it was saved ({record['why']}), so its custom backward "
            "cannot be built again; call .eval() on it for inference, and train the original model"
        )
    block = program.global_block()
    ops = block.ops
    positions = [i for i, op in enumerate(ops) if call_key(op) == key]
    start, end = positions[0], positions[-1] + 1
    run = ops[start:end]

    def mismatch() -> Exception:
        return PyLayerContractError(
            f"the ops of a call of PyLayer {cls_name} in this program loaded by paddle.jit.load are not "
            "those saved with it, so its custom backward cannot be built again for training"
        )

    if positions != list(range(start, end)) or [op.name() for op in run] != record["ops"]:
        raise mismatch()
    inputs = [_input(ops, start, run, where, mismatch) for where in record["inputs"]]
    outputs = [None if where is None else run[where["op"]].result(where["result"]) for where in record["outputs"]]
    cls = records.import_class(record["class"])
    args, kwargs = records.decode(record["args"], inputs), records.decode(record["kwargs"], inputs)
    previous = paddle.pir.get_current_insertion_point()
    with paddle.static.program_guard(program):
        paddle.pir.set_insertion_point(run[0])
        try:
            built = builders.build_call(cls, args, kwargs)
        finally:
            paddle.pir.set_insertion_point(previous)
    op = next(leaf.get_defining_op() for leaf in structure.flatten(built)
              if isinstance(leaf, paddle.pir.Value) and leaf.get_defining_op().name() == PYLAYER)
    if op.num_results() != len(outputs):
        raise mismatch()
    for old, new in zip(outputs, op.results()):
        if old is not None:
            old.replace_all_uses_with(new)
    inside = {other.id() for other in run}
    if any(user.id() not in inside for other in run for value in other.results() for user in value.all_used_ops()):
        raise mismatch()
    for other in reversed(run):
        other.erase()


def rebuild_calls(runnable: Any) -> None:
    """Build each recorded call of a loaded export's training program again as a pylayer op
    (last first: the ops before a call stay as saved until it is built), so that autodiff
    runs the class's own backward."""
    block = runnable.program.global_block()
    keys = list(dict.fromkeys(key for key in map(call_key, block.ops) if key is not None and key in records.LOADED))
    for key in reversed(keys):
        _rebuild(runnable.program, key, records.LOADED[key])
    if keys:
        forget_values(runnable)


