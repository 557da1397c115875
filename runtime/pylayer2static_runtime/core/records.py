"""The export call record: how to build a PyLayer call again, as JSON (Paddle-free).

An export holds each PyLayer call's forward ops inlined; its custom backward is Python code,
so it is not in the file. So each call is recorded as its op is built (`record_call`: the
class by module and qualified name, forward's arguments with each tensor as its index among
the op's inputs and every other value as JSON, a function or class as its module and
qualified name, or why it cannot be recorded), the records of an export are written beside
it (`write`, `PREFIX.p2s`), read where it is loaded (`read`, into `LOADED`), and training the
loaded model builds each call again from its record (`decode`, `import_class`). Where the
calls' ops are in an export, and the framework hooks that save, load and rebuild, are the
IR's (`pir/export.py`, `pir/reload.py`).
"""
import functools
import importlib
import json
import logging
import os
import sys
from typing import Any, Callable, Dict, List, Tuple

from .errors import PyLayerContractError

LOG = logging.getLogger("pylayer2static_runtime")

CALL_ATTR = "p2s_call"
"""The attribute holding a pylayer op's call as JSON (`record_call`)."""
SUFFIX = ".p2s"
"""The records file beside an export's `PREFIX.json` (JSON). Not `.p2s.json`: paddle 3.3.1
`_construct_program_holders` loads every `PREFIX.NAME.json` beside the model as the program
of method NAME."""
FORMAT = "pylayer2static-calls/1"

LOADED: Dict[str, Dict[str, Any]] = {}
"""The records of the exports loaded in this process, by key."""


class NotRecordable(Exception):
    """Why a call cannot be recorded (an argument JSON cannot carry, an input not found)."""


def encode(value: Any, is_tensor: Callable[[Any], bool], tensors: List[int]) -> Any:
    """`value` as JSON, each tensor as the next op input (in `structure.flatten`'s order)."""
    if is_tensor(value):
        tensors[0] += 1
        return {"tensor": tensors[0] - 1}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [encode(item, is_tensor, tensors) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"dict": [[key, encode(item, is_tensor, tensors)] for key, item in value.items()]}
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and resolves_to(module, qualname, value):
        return {"ref": [module, qualname]}
    raise NotRecordable(f"an argument of the call is {type(value).__name__} {value!r:.60}, which JSON cannot carry")


def resolves_to(module: str, qualname: str, value: Any) -> bool:
    """Whether `qualname` read in module `module`, as imported, is `value` itself (nothing
    is imported here: a module outside `sys.modules` would run again)."""
    if "<" in qualname:  # <locals>, <lambda>: not reachable by name
        return False
    try:
        return module in sys.modules and lookup(sys.modules[module], qualname) is value
    except AttributeError:
        return False


def lookup(owner: Any, qualname: str) -> Any:
    return functools.reduce(getattr, qualname.split("."), owner)


def decode(value: Any, inputs: List[Any]) -> Any:
    if not isinstance(value, dict):
        return value
    (kind, item), = value.items()
    if kind == "tensor":
        return inputs[item]
    if kind == "list":
        return [decode(v, inputs) for v in item]
    if kind == "tuple":
        return tuple(decode(v, inputs) for v in item)
    if kind == "dict":
        return {key: decode(v, inputs) for key, v in item}
    return lookup(importlib.import_module(item[0]), item[1])


def record_call(op: Any, cls: type, call: Tuple[Tuple[Any, ...], Dict[str, Any]], is_tensor: Callable[[Any], bool]) -> None:
    """Put on pylayer op `op` how to build it again: `cls` and forward's arguments `call`."""
    record: Dict[str, Any] = {"class": [cls.__module__, cls.__qualname__]}
    try:
        if not resolves_to(cls.__module__, cls.__qualname__, cls):
            raise NotRecordable(f"the class is not importable as {cls.__module__}.{cls.__qualname__}")
        tensors = [0]  # keyword tensors follow the positional ones (`PyLayerOp`'s inputs)
        record["args"] = encode(list(call[0]), is_tensor, tensors)
        record["kwargs"] = encode(dict(call[1]), is_tensor, tensors)
    except NotRecordable as exc:
        record = {"class": record["class"], "why": str(exc)}
    op.set_str_attr(CALL_ATTR, json.dumps(record))


def records_path(model_file: str) -> str:
    return (model_file[: -len(".json")] if model_file.endswith(".json") else model_file) + SUFFIX


def write(path: str, records: Dict[str, Dict[str, Any]]) -> None:
    """Write an export's `records` to `path`, or remove an earlier export's there if none."""
    if records:
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"format": FORMAT, "calls": records}, out, indent=1, sort_keys=True)
    elif os.path.exists(path):
        os.remove(path)


def read(path: str) -> None:
    """Read the records at `path`, if any, into `LOADED`. A file that cannot be read is
    logged, not raised: inference needs none of it."""
    if not os.path.exists(path):
        return
    try:
        with open(path, encoding="utf-8") as source:
            saved = json.load(source)
        if saved.get("format") != FORMAT:
            raise ValueError(f"format {saved.get('format')!r}, expected {FORMAT!r}")
        LOADED.update(saved["calls"])
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        LOG.warning("pylayer2static: %s not read (%s); training the loaded model is refused", path, exc)


def import_class(names: List[str]) -> type:
    module, qualname = names
    instead = ("make it importable (the transpiled module, on sys.path) before training the model "
               "loaded by paddle.jit.load, or call .eval() on the loaded model for inference")
    try:
        return lookup(importlib.import_module(module), qualname)
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
