"""A body's ops recorded and replayed in the legacy Program IR (`replay.Tapes`).

A tape is a copy of each op a body appended to the block being built (its description, with
its attributes and call stack) and of each variable it declared there (name, dtype, shape,
stop_gradient, persistable), and the names of the body's inputs. A replay declares a fresh
variable for each recorded one, appends a copy of each op with its variables renamed to the
call's own, and wraps it as the framework does an op made from its description (paddle 2.6.2
base/framework.py `Operator.__init__` given a typed desc: no checks, no call stack taken).
A body's ops carry the user's call stack: the user's frames down to the call
(`frames.outer_callstack`), then the body's own. A replay from another line puts its own
frames down to the call in place of the recorded ones (`frames.RecordedStacks`); a tape with an op whose stack does not
begin so (one the runtime built outside the body) is `restackable` no more, and is replayed
only from the same stack.

A body is recorded only when what it built is self-contained: ops in the block being built
alone, no block made, no variable declared elsewhere (an in-place write declares its result
in the global block), every variable its ops read or write one of its inputs or one it
declared, each a dense tensor.
"""
import contextlib
import re
from typing import Any, Callable, Dict, Hashable, Iterator, List, Optional, Tuple

import paddle
from paddle.base import core, framework, unique_name
from paddle.base.framework import Operator, Variable

from .. import frames
from .pylayer_op import CALLSTACK_ATTR

backward_tapes = True  # backward's block is built with the op, and kept until inlined after autodiff
_DENSE = core.VarDesc.VarType.LOD_TENSOR
_COUNTED = re.compile(r"_\d+$")


class LegacyTape:
    """A body's ops and variables as recorded (`replay.Tape`)."""

    __slots__ = ("inputs", "variables", "ops", "stacks", "_refs")

    def __init__(self, inputs: Tuple[str, ...], variables: List[Tuple[Any, ...]], stacks: frames.RecordedStacks) -> None:
        self.inputs = inputs
        self.variables = variables  # (name, dtype, shape, stop_gradient, persistable, lod_level)
        self.ops: List[Any] = []  # standalone copies of the ops' descs
        self.stacks = stacks
        self._refs = frozenset(inputs) | {variable[0] for variable in variables}

    def ref(self, value: Any) -> Optional[Hashable]:
        name = value.name if isinstance(value, Variable) else None
        return name if name in self._refs else None


def environment() -> Hashable:
    """What `Operator.__init__` and the framework's builders take from the program and the
    guards in force as an op is made: its role (and role variables), name scope, device, and
    the program's random seed (`dropout` and the random ops read it)."""
    program = paddle.static.default_main_program()
    return (int(program._op_role), tuple(program._op_role_var), framework._full_name_scope(),
            framework._current_device, program.random_seed)


@contextlib.contextmanager
def recording(inputs: List[Any]) -> Iterator[List[Optional[LegacyTape]]]:
    """Around a body built on `inputs`: the list yielded holds its tape after it, or None."""
    program = paddle.static.default_main_program()
    block = program.current_block()
    holder: List[Optional[LegacyTape]] = [None]
    first_op, names_before = len(block.ops), set(block.vars)
    blocks_before, around_before = program.num_blocks, _around(block)
    stacks = frames.RecordedStacks()
    yield holder
    if program.num_blocks != blocks_before or _around(block) != around_before:
        return
    if block.desc.op_size() != len(block.ops):
        return
    declared = [var for name, var in block.vars.items() if name not in names_before]
    if any(var.type != _DENSE for var in declared):
        return
    tape = LegacyTape(tuple(var.name for var in inputs),
                      [(var.name, var.dtype, tuple(var.shape), var.stop_gradient, var.persistable, var.lod_level)
                       for var in declared], stacks)
    for op in block.ops[first_op:]:
        if any(name not in tape._refs for name in op.input_arg_names + op.output_arg_names):
            return
        desc = core.OpDesc()
        desc.copy_from(op.desc)
        tape.ops.append(desc)
        stacks.add(op.attr(CALLSTACK_ATTR) if op.has_attr(CALLSTACK_ATTR) else [])
    holder[0] = tape


def _around(block: Any) -> List[Tuple[int, int]]:
    """The ops and variables of the blocks a body could append to besides its own: those
    around it, up to the global block."""
    counts = []
    while block.parent_idx >= 0:
        block = block.program.block(block.parent_idx)
        counts.append((len(block.ops), len(block.vars)))
    return counts


def replay(tape: LegacyTape, inputs: List[Any]) -> Callable[[Hashable], Any]:
    """Append `tape`'s ops on `inputs` to the block being built; what each ref is now."""
    block = paddle.static.default_main_program().current_block()
    names: Dict[str, str] = {old: var.name for old, var in zip(tape.inputs, inputs)}
    values: Dict[Hashable, Any] = dict(zip(tape.inputs, inputs))
    for name, dtype, shape, stop_gradient, persistable, lod_level in tape.variables:
        fresh = _fresh_name(block, name)
        names[name] = fresh
        values[name] = block.create_var(name=fresh, type=_DENSE, dtype=dtype, shape=shape, lod_level=lod_level,
                                        stop_gradient=stop_gradient, persistable=persistable)
    for recorded, stack in zip(tape.ops, tape.stacks.for_call()):
        desc = block.desc.append_op()
        desc.copy_from(recorded)
        if stack is not None:
            desc._set_strs_attr(CALLSTACK_ATTR, stack)
        for slot in desc.input_names():
            desc.set_input(slot, [names[name] for name in desc.input(slot)])
        for slot in desc.output_names():
            desc.set_output(slot, [names[name] for name in desc.output(slot)])
        block.ops.append(Operator(block, desc))
    return values.__getitem__


def _fresh_name(block: Any, recorded: str) -> str:
    """A name no variable of the program has: the recorded one's root (`tmp_3` -> `tmp`) and
    `.replayed`, numbered by the global name generator. Not the root alone: the program's
    names come from more than one generator (paddle 2.6.2 `Variable.detach` numbers with the
    program's own, `Program._name_generator`), so the global one may give a name another
    block of the program holds already."""
    root = _COUNTED.sub("", recorded) or recorded
    while True:
        name = unique_name.generate(root + ".replayed")
        if block._find_var_recursive(name) is None:
            return name
