"""An export's PyLayer calls: inlined, marked and recorded where `jit.save` writes them (paddle 3.x).

Exporting (`inline_export`, in place of `ops.inline_pylayers` for the program
`normalize_pir_program` makes): each top-level pylayer op is inlined, and the run of ops that
takes its place (nested PyLayers' ops included) gets `CALL_MARK{key}` in its `struct_name`,
the one attribute of its own paddle 3.3.1 serializes for any op (`ops.MARK`); where its
inputs and outputs are in that run is recorded with the call (`core/records.py`), and
`save_inference_model_pir` writes the records beside the model (`PREFIX.p2s`). The key is a
hash of the record, so records of different exports loaded in one process never collide.
The export's ops are those of `ops.inline_pylayers`: the predictor and inference-only loads
read nothing new. Loading: `pir_translated_layer._load_pir_program` reads `PREFIX.p2s` beside
`PREFIX.json` into this process's records; training builds the calls again (`reload.py`).

Read from paddle 3.3.1: static/pir_io.py (`save_inference_model_pir` normalizes, then
serializes to PREFIX.json) and jit/pir_translated_layer.py (`_load_pir_program`).
"""
import functools
import hashlib
import json
import os
from typing import Any, Callable, Dict, List, Optional, Set

from .. import patch
from ..core import records, scope
from . import ops

CALL_MARK = "p2s-call:"
"""`struct_name` segment naming the call an exported op belongs to (`inline_export`)."""


def _segments(op: Any) -> List[str]:
    return op.str_attr("struct_name").split("/") if op.has_attr("struct_name") else []


def call_key(op: Any) -> Optional[str]:
    """The call whose export run `op` belongs to, or None."""
    return next((part[len(CALL_MARK):] for part in _segments(op) if part.startswith(CALL_MARK)), None)


def _mark(op: Any, key: str) -> None:
    """Name call `key` in `op`'s `struct_name`, in place of any call named there (a loaded
    export traced into a program that is exported again)."""
    kept = [part for part in _segments(op) if part and not part.startswith(CALL_MARK)]
    op.set_str_attr("struct_name", "/" + "".join(f"{part}/" for part in kept + [f"{CALL_MARK}{key}"]))


def _between(block: Any, before: Optional[int], after: Optional[int]) -> List[Any]:
    """The ops of `block` after the op of id `before` and before the op of id `after`
    (None: the block's start, its end)."""
    listed = block.ops
    ids = [op.id() for op in listed]
    start = ids.index(before) + 1 if before is not None else 0
    end = ids.index(after) if after is not None else len(listed)
    return listed[start:end]


def _inline_nested(block: Any, before: Optional[int], after: Optional[int], values: List[Any]) -> int:
    """Inline the pylayer ops that inlining one brought between `before` and `after`
    (nested PyLayers), keeping `values`, the call's outputs, pointing at what replaces them;
    the number inlined."""
    count = 0
    kept: Set[int] = set()
    while True:
        pending = [op for op in _between(block, before, after) if op.name() == ops.PYLAYER and op.id() not in kept]
        if not pending:
            break
        for op in pending:
            results = list(op.results())
            replaced = ops.inline_op(op)
            if replaced is None:
                kept.add(op.id())
            else:
                count += 1
                values[:] = [ops.replaced(value, results, replaced) for value in values]
    for op in _between(block, before, after):
        for inner in op.blocks():
            count += ops.inline_block(inner)
    return count


def _result_index(op: Any, value: Any) -> int:
    return next(i for i, result in enumerate(op.results()) if result.is_same(value))


def _locate(block: Any, run: List[Any], inputs: List[Any], outputs: List[Any]) -> Dict[str, Any]:
    """Where a call's inputs and outputs are, relative to its run of ops: an input as the
    operand of a run op that reads it, else as the result of the op so many ops before the
    run (ops before a run are rebuilt after it: `rebuild_calls`); an output as a run op's
    result."""
    if not run:
        raise records.NotRecordable("the call left no ops in the export")
    index = {op.id(): i for i, op in enumerate(block.ops)}
    start = index[run[0].id()]
    in_run = {op.id(): k for k, op in enumerate(run)}
    located: List[Dict[str, Any]] = []
    for value in inputs:
        reader = next(((k, n) for k, op in enumerate(run) for n, operand in enumerate(op.operands_source())
                       if operand.is_same(value)), None)
        if reader is not None:
            located.append({"op": reader[0], "operand": reader[1]})
            continue
        maker = value.get_defining_op()
        if maker is None or index.get(maker.id(), start) >= start:
            raise records.NotRecordable("an input of the call is no op's result before it")
        located.append({"back": start - index[maker.id()], "result": _result_index(maker, value), "name": maker.name()})
    results: List[Optional[Dict[str, int]]] = []
    for value in outputs:
        if not value.initialized():
            results.append(None)
            continue
        maker = value.get_defining_op()
        if maker is None or maker.id() not in in_run:
            raise records.NotRecordable("an output of the call is no result of its ops")
        results.append({"op": in_run[maker.id()], "result": _result_index(maker, value)})
    return {"inputs": located, "outputs": results, "ops": [op.name() for op in run]}


def inline_export(program: Any) -> int:
    """`ops.inline_pylayers` for an export, each top-level call's run of ops marked and
    its record kept for `save_inference_model_pir` (the scope's `export_records`); the number inlined."""
    block = program.global_block()
    ops.refuse_aliased_writes(block)
    calls = []
    count = 0
    for op in [op for op in block.ops if op.name() == ops.PYLAYER]:
        listed = block.ops
        at = next(i for i, other in enumerate(listed) if other.id() == op.id())
        before = listed[at - 1].id() if at else None
        after = listed[at + 1].id() if at + 1 < len(listed) else None
        record = json.loads(op.str_attr(records.CALL_ATTR)) if op.has_attr(records.CALL_ATTR) else None
        inputs = list(op.operands_source())
        values = ops.inline_op(op)
        if values is None:
            continue
        values = list(values)
        count += 1 + _inline_nested(block, before, after, values)
        if record is None:
            continue
        draft = f"draft{len(calls)}"
        for inner in _between(block, before, after):
            _mark(inner, draft)
        calls.append((draft, record, inputs, values))
    for op in block.ops:
        for inner in op.blocks():
            count += ops.inline_block(inner)
    if count:
        ops.short_circuit_pipes(block)
    for number, (draft, record, inputs, values) in enumerate(calls):
        run = [op for op in block.ops if call_key(op) == draft]
        record["number"] = number  # two calls recorded alike have keys of their own
        if "why" not in record:
            try:
                record.update(_locate(block, run, inputs, values))
            except records.NotRecordable as exc:
                record = {"class": record["class"], "number": number, "why": str(exc)}
        key = hashlib.sha1(json.dumps(record, sort_keys=True).encode()).hexdigest()[:16]
        for op in run:
            _mark(op, key)
        exporting = scope.current().export_records
        if exporting is not None:
            exporting[key] = record
    return count


def _recording_export(save: Callable[..., Any]) -> Callable[..., Any]:
    """`save_inference_model_pir`, then the records of the export's calls written beside
    the model (`PREFIX.json`, or `__model__.json` with `separate_parameters`)."""

    @functools.wraps(save)
    def save_and_record(path_prefix: str, *args: Any, **kwargs: Any) -> None:
        calls: Dict[str, Dict[str, Any]] = {}
        with scope.entered(export_records=calls):
            save(path_prefix, *args, **kwargs)
        prefix = os.path.abspath(os.path.normpath(path_prefix))
        if kwargs.get("separate_parameters", False):
            prefix = os.path.join(os.path.dirname(prefix), "__model__")
        records.write(records.records_path(prefix), calls)

    return save_and_record


def _reading_records(load: Callable[..., Any]) -> Callable[..., Any]:
    """`_load_pir_program`, then the records beside the model read into this process's."""

    @functools.wraps(load)
    def load_and_read(model_file: str, *args: Any, **kwargs: Any) -> Any:
        program = load(model_file, *args, **kwargs)
        records.read(records.records_path(model_file))
        return program

    return load_and_read


def install() -> None:
    """Record calls where exports are saved, and read the records where they are loaded."""
    from paddle.jit import pir_translated_layer
    from paddle.static import io, pir_io

    patch.install("pir.export.save_inference_model_pir", pir_io, "save_inference_model_pir", _recording_export)
    patch.install("pir.export.io.save_inference_model_pir", io, "save_inference_model_pir", _recording_export)
    patch.install("pir.export.load_pir_program", pir_translated_layer, "_load_pir_program", _reading_records)
