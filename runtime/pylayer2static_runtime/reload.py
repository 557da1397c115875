"""Training a PIR export after `paddle.jit.load`, in a fresh process (paddle 3.x).

An export holds each PyLayer call's forward ops inlined (inline.py, issue 19); its custom
backward is Python code, so it is not in the file, and autodiff of the forward ops would
differ from it silently (a straight-through quantizer's gradient would be round's: zero).
So for each call an export records how to build the call again, and training a loaded
model builds it again as a `pylayer` op whose backward is the class's own:

- building (`record_call`): the pylayer op gets the call as an attribute (`CALL_ATTR`):
  the class by module and qualified name, forward's arguments with each tensor as its
  index among the op's inputs and every other value as JSON (a function or class as its
  module and qualified name), or why it cannot be recorded (a lambda, a layer object);
- exporting (`inline_export`, in place of `inline.inline_pylayers` for the program
  `normalize_pir_program` makes): each top-level pylayer op is inlined, and the run of ops
  that takes its place (nested PyLayers' ops included) gets `CALL_MARK{key}` in its
  `struct_name`, the one attribute of its own paddle 3.3.1 serializes for any op (inline.py
  `_MARK`); where its inputs and outputs are in that run is recorded with the call, and
  `save_inference_model_pir` writes the records beside the model (`PREFIX.p2s`). The
  key is a hash of the record, so records of different exports loaded in one process never
  collide. The export's ops are those of `inline.inline_pylayers`: the predictor and
  inference-only loads read nothing new;
- loading: `pir_translated_layer._load_pir_program` reads `PREFIX.p2s` beside
  `PREFIX.json` into this process's records;
- training (`rebuild_calls`, from inline.py's hook on `PartialProgramLayer._append_backward`,
  before autodiff): each marked run of the training program whose record is known is
  replaced by `apply(cls, *args, **kwargs)` on the run's inputs (the class imported by
  name: a loud error naming the module when it cannot be), last run first, so the ops
  before a run are still as saved when its inputs are looked up. What stays marked is
  refused as before (inline.py `_refuse_inlined_training`).

Read from paddle 3.3.1: jit/pir_translated_layer.py (`_load_pir_program`; `_run_dygraph`
trains a loaded program through `PartialProgramLayer`), jit/dy2static/pir_partial_program.py
(`_create_program` clones the loaded program and calls `_append_backward` on the clone) and
static/pir_io.py (`save_inference_model_pir` normalizes, then serializes to PREFIX.json).
"""
import functools
import hashlib
import importlib
import json
import logging
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import paddle

from . import inline, patch, structure
from .errors import PyLayerContractError

LOG = logging.getLogger("pylayer2static_runtime")

CALL_ATTR = "p2s_call"
"""The attribute holding a pylayer op's call as JSON (`record_call`)."""
CALL_MARK = "p2s-call:"
"""`struct_name` segment naming the call an exported op belongs to (`inline_export`)."""
SUFFIX = ".p2s"
"""The records file beside an export's `PREFIX.json` (JSON). Not `.p2s.json`: paddle 3.3.1
`_construct_program_holders` loads every `PREFIX.NAME.json` beside the model as the program
of method NAME."""
FORMAT = "pylayer2static-calls/1"

_RECORDS: Dict[str, Dict[str, Any]] = {}
"""The records of the exports loaded in this process, by key."""


class _Exporting:
    """The records of the export being saved (`save_inference_model_pir`), else None."""

    records: Optional[Dict[str, Dict[str, Any]]] = None


class _NotRecordable(Exception):
    """Why a call cannot be recorded (an argument JSON cannot carry, an input not found)."""


def _encode(value: Any, is_tensor: Callable[[Any], bool], tensors: List[int]) -> Any:
    """`value` as JSON, each tensor as the next op input (in `structure.flatten`'s order)."""
    if is_tensor(value):
        tensors[0] += 1
        return {"tensor": tensors[0] - 1}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [_encode(item, is_tensor, tensors) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"dict": [[key, _encode(item, is_tensor, tensors)] for key, item in value.items()]}
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and _resolves_to(module, qualname, value):
        return {"ref": [module, qualname]}
    raise _NotRecordable(f"an argument of the call is {type(value).__name__} {value!r:.60}, which JSON cannot carry")


def _resolves_to(module: str, qualname: str, value: Any) -> bool:
    """Whether `qualname` read in module `module`, as imported, is `value` itself (nothing
    is imported here: a module outside `sys.modules` would run again)."""
    if "<" in qualname:  # <locals>, <lambda>: not reachable by name
        return False
    try:
        return module in sys.modules and _lookup(sys.modules[module], qualname) is value
    except AttributeError:
        return False


def _lookup(owner: Any, qualname: str) -> Any:
    return functools.reduce(getattr, qualname.split("."), owner)


def _decode(value: Any, inputs: List[Any]) -> Any:
    if not isinstance(value, dict):
        return value
    (kind, item), = value.items()
    if kind == "tensor":
        return inputs[item]
    if kind == "list":
        return [_decode(v, inputs) for v in item]
    if kind == "tuple":
        return tuple(_decode(v, inputs) for v in item)
    if kind == "dict":
        return {key: _decode(v, inputs) for key, v in item}
    return _lookup(importlib.import_module(item[0]), item[1])


def record_call(op: Any, cls: type, call: Tuple[Tuple[Any, ...], Dict[str, Any]], is_tensor: Callable[[Any], bool]) -> None:
    """Put on pylayer op `op` how to build it again: `cls` and forward's arguments `call`."""
    record: Dict[str, Any] = {"class": [cls.__module__, cls.__qualname__]}
    try:
        if not _resolves_to(cls.__module__, cls.__qualname__, cls):
            raise _NotRecordable(f"the class is not importable as {cls.__module__}.{cls.__qualname__}")
        tensors = [0]  # keyword tensors follow the positional ones (`PyLayerOp`'s inputs)
        record["args"] = _encode(list(call[0]), is_tensor, tensors)
        record["kwargs"] = _encode(dict(call[1]), is_tensor, tensors)
    except _NotRecordable as exc:
        record = {"class": record["class"], "why": str(exc)}
    op.set_str_attr(CALL_ATTR, json.dumps(record))


def _segments(op: Any) -> List[str]:
    return op.str_attr("struct_name").split("/") if op.has_attr("struct_name") else []


def _call_key(op: Any) -> Optional[str]:
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
    ops = block.ops
    ids = [op.id() for op in ops]
    start = ids.index(before) + 1 if before is not None else 0
    end = ids.index(after) if after is not None else len(ops)
    return ops[start:end]


def _inline_nested(block: Any, before: Optional[int], after: Optional[int], values: List[Any]) -> int:
    """Inline the pylayer ops that inlining one brought between `before` and `after`
    (nested PyLayers), keeping `values`, the call's outputs, pointing at what replaces them;
    the number inlined."""
    count = 0
    kept: Set[int] = set()
    while True:
        pending = [op for op in _between(block, before, after) if op.name() == inline.PYLAYER and op.id() not in kept]
        if not pending:
            break
        for op in pending:
            results = list(op.results())
            replaced = inline.inline_op(op)
            if replaced is None:
                kept.add(op.id())
            else:
                count += 1
                values[:] = [inline.replaced(value, results, replaced) for value in values]
    for op in _between(block, before, after):
        for inner in op.blocks():
            count += inline.inline_block(inner)
    return count


def _result_index(op: Any, value: Any) -> int:
    return next(i for i, result in enumerate(op.results()) if result.is_same(value))


def _locate(block: Any, run: List[Any], inputs: List[Any], outputs: List[Any]) -> Dict[str, Any]:
    """Where a call's inputs and outputs are, relative to its run of ops: an input as the
    operand of a run op that reads it, else as the result of the op so many ops before the
    run (ops before a run are rebuilt after it: `rebuild_calls`); an output as a run op's
    result."""
    if not run:
        raise _NotRecordable("the call left no ops in the export")
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
            raise _NotRecordable("an input of the call is no op's result before it")
        located.append({"back": start - index[maker.id()], "result": _result_index(maker, value), "name": maker.name()})
    results: List[Optional[Dict[str, int]]] = []
    for value in outputs:
        if not value.initialized():
            results.append(None)
            continue
        maker = value.get_defining_op()
        if maker is None or maker.id() not in in_run:
            raise _NotRecordable("an output of the call is no result of its ops")
        results.append({"op": in_run[maker.id()], "result": _result_index(maker, value)})
    return {"inputs": located, "outputs": results, "ops": [op.name() for op in run]}


def inline_export(program: Any) -> int:
    """`inline.inline_pylayers` for an export, each top-level call's run of ops marked and
    its record kept for `save_inference_model_pir` (`_Exporting`); the number inlined."""
    block = program.global_block()
    inline.refuse_aliased_writes(block)
    calls = []
    count = 0
    for op in [op for op in block.ops if op.name() == inline.PYLAYER]:
        ops = block.ops
        at = next(i for i, other in enumerate(ops) if other.id() == op.id())
        before = ops[at - 1].id() if at else None
        after = ops[at + 1].id() if at + 1 < len(ops) else None
        record = json.loads(op.str_attr(CALL_ATTR)) if op.has_attr(CALL_ATTR) else None
        inputs = list(op.operands_source())
        values = inline.inline_op(op)
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
            count += inline.inline_block(inner)
    if count:
        inline.short_circuit_pipes(block)
    for number, (draft, record, inputs, values) in enumerate(calls):
        run = [op for op in block.ops if _call_key(op) == draft]
        record["number"] = number  # two calls recorded alike have keys of their own
        if "why" not in record:
            try:
                record.update(_locate(block, run, inputs, values))
            except _NotRecordable as exc:
                record = {"class": record["class"], "number": number, "why": str(exc)}
        key = hashlib.sha1(json.dumps(record, sort_keys=True).encode()).hexdigest()[:16]
        for op in run:
            _mark(op, key)
        if _Exporting.records is not None:
            _Exporting.records[key] = record
    return count


def _records_path(model_file: str) -> str:
    return (model_file[: -len(".json")] if model_file.endswith(".json") else model_file) + SUFFIX


def _recording_export(save: Callable[..., Any]) -> Callable[..., Any]:
    """`save_inference_model_pir`, then the records of the export's calls written beside
    the model (`PREFIX.json`, or `__model__.json` with `separate_parameters`)."""

    @functools.wraps(save)
    def save_and_record(path_prefix: str, *args: Any, **kwargs: Any) -> None:
        outer, _Exporting.records = _Exporting.records, {}
        try:
            save(path_prefix, *args, **kwargs)
            records = _Exporting.records
        finally:
            _Exporting.records = outer
        prefix = os.path.abspath(os.path.normpath(path_prefix))
        if kwargs.get("separate_parameters", False):
            prefix = os.path.join(os.path.dirname(prefix), "__model__")
        path = _records_path(prefix)
        if records:
            with open(path, "w", encoding="utf-8") as out:
                json.dump({"format": FORMAT, "calls": records}, out, indent=1, sort_keys=True)
        elif os.path.exists(path):
            os.remove(path)  # an earlier export's, at this prefix

    return save_and_record


def _reading_records(load: Callable[..., Any]) -> Callable[..., Any]:
    """`_load_pir_program`, then the records beside the model read into this process's.
    A file that cannot be read is logged, not raised: inference needs none of it."""

    @functools.wraps(load)
    def load_and_read(model_file: str, *args: Any, **kwargs: Any) -> Any:
        program = load(model_file, *args, **kwargs)
        path = _records_path(model_file)
        if os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as source:
                    saved = json.load(source)
                if saved.get("format") != FORMAT:
                    raise ValueError(f"format {saved.get('format')!r}, expected {FORMAT!r}")
                _RECORDS.update(saved["calls"])
            except (OSError, ValueError, KeyError, AttributeError) as exc:
                LOG.warning("pylayer2static: %s not read (%s); training the loaded model is refused", path, exc)
        return program

    return load_and_read


def _import_class(names: List[str]) -> type:
    module, qualname = names
    instead = ("make it importable (the transpiled module, on sys.path) before training the model "
               "loaded by paddle.jit.load, or call .eval() on the loaded model for inference")
    try:
        return _lookup(importlib.import_module(module), qualname)
    except ImportError as exc:
        raise PyLayerContractError(
            f"training this model loaded by paddle.jit.load builds PyLayer {qualname}'s custom backward "
            f"again, from module '{module}', and importing '{module}' failed ({exc}); {instead}"
        ) from None
    except AttributeError:
        raise PyLayerContractError(
            f"training this model loaded by paddle.jit.load builds PyLayer {qualname}'s custom backward "
            f"again, and module '{module}' has no {qualname}; {instead}"
        ) from None


def _input(ops: List[Any], start: int, run: List[Any], where: Dict[str, Any], mismatch: Callable[[], Exception]) -> Any:
    if "op" in where:
        return run[where["op"]].operand_source(where["operand"])
    maker = ops[start - where["back"]] if where["back"] <= start else None
    if maker is None or maker.name() != where["name"]:
        raise mismatch()
    return maker.result(where["result"])


def _rebuild(program: Any, key: str, record: Dict[str, Any]) -> None:
    """Replace call `key`'s run of ops in `program` by the call, built as a pylayer op."""
    from .apply import apply  # apply.py installs this module's hooks

    cls_name = ".".join(record["class"])
    if "why" in record:
        raise PyLayerContractError(
            f"this model loaded by paddle.jit.load cannot be trained: pylayer2static could not record "
            f"a call of PyLayer {cls_name} when it was saved ({record['why']}), so its custom backward "
            "cannot be built again; call .eval() on it for inference, and train the original model"
        )
    block = program.global_block()
    ops = block.ops
    positions = [i for i, op in enumerate(ops) if _call_key(op) == key]
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
    cls = _import_class(record["class"])
    args, kwargs = _decode(record["args"], inputs), _decode(record["kwargs"], inputs)
    previous = paddle.pir.get_current_insertion_point()
    with paddle.static.program_guard(program):
        paddle.pir.set_insertion_point(run[0])
        try:
            built = apply(cls, *args, **kwargs)
        finally:
            paddle.pir.set_insertion_point(previous)
    op = next(leaf.get_defining_op() for leaf in structure.flatten(built)
              if isinstance(leaf, paddle.pir.Value) and leaf.get_defining_op().name() == inline.PYLAYER)
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
    keys = list(dict.fromkeys(key for key in map(_call_key, block.ops) if key is not None and key in _RECORDS))
    for key in reversed(keys):
        _rebuild(runnable.program, key, _RECORDS[key])
    if keys:
        inline.forget_values(runnable)


def install() -> None:
    """Record calls where exports are saved, and read the records where they are loaded."""
    from paddle.jit import pir_translated_layer
    from paddle.static import io, pir_io

    patch.install("reload.save_inference_model_pir", pir_io, "save_inference_model_pir", _recording_export)
    patch.install("reload.io.save_inference_model_pir", io, "save_inference_model_pir", _recording_export)
    patch.install("reload.load_pir_program", pir_translated_layer, "_load_pir_program", _reading_records)
