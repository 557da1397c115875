"""A body's ops recorded and replayed in the legacy Program IR (`replay.Tapes`).

A tape is a copy of each op a body appended to the block being built (its description, with
its attributes and call stack) and of each variable it declared there (name, dtype, shape,
stop_gradient, persistable), and the names of the body's inputs. A replay declares a fresh
variable for each recorded one, appends a copy of each op with its variables renamed to the
call's own, and wraps it as the framework does an op made from its description (paddle 2.6.2
base/framework.py `Operator.__init__` given a typed desc: no checks, no call stack taken).
A body's ops carry the user's call stack: the user's frames down to the call
(`frames.outer_callstack`), then the body's own. A replay from another line puts its own
frames down to the call in place of the recorded ones (`frames.RecordedStacks`); a tape with
an op whose stack does not begin so (one the runtime built outside the body) is `restackable`
no more, and is replayed only from the same stack.

A body is recorded only when what it built is self-contained: ops in the block being built
alone, no block made, no variable declared elsewhere (an in-place write declares its result
in the global block), every variable its ops read or write one of its inputs or one it
declared, each a dense tensor.

A whole call is recorded too (`call_recording`, `replay_call`; `call_tapes`): backward's
block is built with the op, so everything a call adds to the program is there when the op is
done: the op's blocks (forward's and backward's, and any inside them) with their ops and
variables, and the pylayer op and its outputs in the block being built. A call alike gets
copies of all of it, its blocks made anew and every block attribute, variable and gradient
name (`<name>@GRAD` of a name the call declares or takes) renamed to its own: the op's
structure (the copies into and out of its blocks, the renames of backward's gradients, the
op itself through the framework's `append_op`) was most of building a call whose bodies were
replayed. A call is recorded when it is self-contained as a body must be, over every block it
made: each variable its ops name one it takes or declares (or the gradient name of one), each
block they hold one it made, nothing added outside them and the block being built, and its
variables dense tensors or the op's step scopes.
"""
import contextlib
import itertools
import re
from typing import Any, Callable, Dict, FrozenSet, Hashable, Iterator, List, Optional, Tuple

import paddle
from paddle.base import core, framework, unique_name
from paddle.base.framework import Operator, Variable

from .. import frames
from .pylayer_op import CALLSTACK_ATTR

backward_tapes = True  # backward's block is built with the op, and kept until inlined after autodiff
call_tapes = True  # and so is the whole call
_DENSE = core.VarDesc.VarType.LOD_TENSOR
_SCOPES = core.VarDesc.VarType.STEP_SCOPES  # the pylayer op's `Scope` output
_GRAD = core.grad_var_suffix()
_COUNTED = re.compile(r"_\d+$")
_NO_PROGRAM = core.ProgramDesc()
_NO_BLOCK = _NO_PROGRAM.block(0)  # a reference into `_NO_PROGRAM`, which the module keeps
"""What a recorded op's block attributes point at until a replay gives them the call's blocks:
the recorded program's may be gone by then."""


def _ref(tape: Any, value: Any) -> Optional[Hashable]:
    """`replay.Tape.ref` of a legacy tape: a variable by its name, if the tape knows it."""
    name = value.name if isinstance(value, Variable) else None
    return name if name in tape._refs else None


class LegacyTape:
    """A body's ops and variables as recorded (`replay.Tape`)."""

    __slots__ = ("inputs", "variables", "ops", "stacks", "_refs")

    def __init__(self, inputs: Tuple[str, ...], variables: List[Tuple[Any, ...]], stacks: frames.RecordedStacks) -> None:
        self.inputs = inputs
        self.variables = variables  # (name, dtype, shape, stop_gradient, persistable, lod_level)
        self.ops: List[Any] = []  # standalone copies of the ops' descs
        self.stacks = stacks
        self._refs = frozenset(inputs) | {variable[0] for variable in variables}

    ref = _ref


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
        _append_copy(block, recorded, stack, names.__getitem__)
    return values.__getitem__


def _append_copy(block: Any, recorded: Any, stack: Optional[List[str]], renamed: Callable[[str], str]) -> Any:
    """Append a copy of the recorded desc to `block` with its variables `renamed` (and call
    stack `stack`, if not None), wrapped as the framework does an op made from its desc
    (paddle 2.6.2 `Operator.__init__` given a typed desc); the copy's desc."""
    desc = block.desc.append_op()
    desc.copy_from(recorded)
    if stack is not None:
        desc._set_strs_attr(CALLSTACK_ATTR, stack)
    for slot in desc.input_names():
        desc.set_input(slot, [renamed(name) for name in desc.input(slot)])
    for slot in desc.output_names():
        desc.set_output(slot, [renamed(name) for name in desc.output(slot)])
    block.ops.append(Operator(block, desc))
    return desc


class LegacyCallTape:
    """A whole call's blocks, ops and variables as recorded (`replay.Tape`).

    `blocks`: per block the call made, in order, its parent and the block it is the backward
    of, as the index of another of them, or None (the block being built; none). `variables`
    and `ops`: where each is (a block's index, None for the block being built), the variable's
    name and kind, the op's standalone desc with the block attributes it has (name, whether a
    list, the indices). `derived`: the declared names that are the gradient name of another the
    call declares or takes (renamed with it). `stopped`: which inputs the call made stop
    gradient.
    """

    __slots__ = ("inputs", "blocks", "variables", "ops", "derived", "stopped", "stacks", "_refs")

    def __init__(self, inputs: Tuple[str, ...], stacks: frames.RecordedStacks) -> None:
        self.inputs = inputs
        self.blocks: List[Tuple[Optional[int], Optional[int]]] = []
        self.variables: List[Tuple[Any, ...]] = []  # (where, name, type, dtype, shape, lod_level, stop_gradient, persistable)
        self.ops: List[Tuple[Optional[int], Any, List[Tuple[str, bool, List[int]]]]] = []
        self.derived: FrozenSet[str] = frozenset()
        self.stopped: Tuple[int, ...] = ()
        self.stacks = stacks
        self._refs = frozenset(inputs)

    ref = _ref


@contextlib.contextmanager
def call_recording(inputs: List[Any]) -> Iterator[List[Optional[LegacyCallTape]]]:
    """Around a whole call on the op's `inputs` (its pylayer op appended, its blocks made): the
    list yielded holds its tape after it, or None."""
    program = paddle.static.default_main_program()
    block = program.current_block()
    holder: List[Optional[LegacyCallTape]] = [None]
    first_op, first_block, around = len(block.ops), program.num_blocks, _around(block)
    vars_before, last_before = len(block.vars), next(reversed(block.vars), None)
    stopped_before = [var.stop_gradient for var in inputs]
    stacks = frames.RecordedStacks()
    yield holder
    tape = LegacyCallTape(tuple(var.name for var in inputs), stacks)
    if _around(block) != around or program.num_blocks != len(program.blocks) or \
            (vars_before and next(itertools.islice(block.vars, vars_before - 1, None), None) != last_before):
        return
    made = program.blocks[first_block:]
    for new in made:
        parent, forward = _made_index(new.parent_idx, block, first_block), _made_index(new.forward_block_idx, None, first_block)
        if parent is _OUTSIDE or forward is _OUTSIDE:
            return
        tape.blocks.append((parent, forward))
    places = [(None, block, list(itertools.islice(block.vars.values(), vars_before, None)), block.ops[first_op:])]
    places += [(index, new, list(new.vars.values()), new.ops) for index, new in enumerate(made)]
    declared = set()
    for where, at, variables, _ in places:
        if at.desc.op_size() != len(at.ops):
            return
        for var in variables:
            if var.type not in (_DENSE, _SCOPES) or var.name in declared or var.name in tape._refs:
                return
            declared.add(var.name)
            dense = var.type == _DENSE
            tape.variables.append((where, var.name, var.type, var.dtype if dense else None,
                                   tuple(var.shape) if dense else None, var.lod_level if dense else None,
                                   var.stop_gradient, var.persistable))
    known = tape._refs | declared
    tape.derived = frozenset(name for name in declared if name.endswith(_GRAD) and name[:-len(_GRAD)] in known)
    for where, _, _, ops in places:
        for op in ops:
            if not _recordable_op(tape, op, known, first_block, where):
                return
    tape._refs = known
    tape.stopped = tuple(i for i, var in enumerate(inputs) if var.stop_gradient != stopped_before[i])
    if any(not inputs[i].stop_gradient for i in tape.stopped):
        return
    holder[0] = tape


_OUTSIDE = object()
"""A block the call did not make, where a recorded call can refer only to the one being built."""


def _made_index(index: int, building: Any, first_block: int) -> Any:
    """Block `index` as a recorded call refers to it: the index among the blocks it made, None
    for `building` (the block being built) or for no block (-1, when `building` is None),
    else `_OUTSIDE`."""
    if index >= first_block:
        return index - first_block
    if (building is None and index < 0) or (building is not None and index == building.idx):
        return None
    return _OUTSIDE


def _recordable_op(tape: LegacyCallTape, op: Any, known: Any, first_block: int, where: Optional[int]) -> bool:
    """Record `op` of the recorded call, if each variable it names is one the call takes or
    declares (or the gradient of one), each block it holds one the call made, and no attribute
    holds a variable's description (a replay would not rename it)."""
    for name in op.input_arg_names + op.output_arg_names:
        if name not in known and not (name.endswith(_GRAD) and name[:-len(_GRAD)] in known):
            return False
    desc = core.OpDesc()
    desc.copy_from(op.desc)
    held = []
    for name in op.attr_names:
        kind = op.attr_type(name)
        if kind in (core.AttrType.VAR, core.AttrType.VARS):
            return False
        if kind not in (core.AttrType.BLOCK, core.AttrType.BLOCKS):
            continue
        listed = kind == core.AttrType.BLOCKS
        ids = op._blocks_attr_ids(name) if listed else [op._block_attr_id(name)]
        if any(index < first_block for index in ids):
            return False
        held.append((name, listed, [index - first_block for index in ids]))
        if listed:
            desc.set_blocks_attr(name, [_NO_BLOCK] * len(ids))
        else:
            desc.set_block_attr(name, _NO_BLOCK)
    tape.ops.append((where, desc, held))
    tape.stacks.add(op.attr(CALLSTACK_ATTR) if op.has_attr(CALLSTACK_ATTR) else [])
    return True


def replay_call(tape: LegacyCallTape, inputs: List[Any]) -> Callable[[Hashable], Any]:
    """Append `tape`'s call on the op's `inputs` to the block being built (its blocks made
    anew); what each ref of the tape is now."""
    program = paddle.static.default_main_program()
    block = program.current_block()
    names: Dict[str, str] = {old: var.name for old, var in zip(tape.inputs, inputs)}
    for _, name, *_ in tape.variables:
        if name not in tape.derived:
            names[name] = _fresh_name(block, name)

    def renamed(name: str) -> str:
        found = names.get(name)
        if found is None:  # a gradient name: the recorded call's is of a name it declared or took
            found = names[name] = renamed(name[:-len(_GRAD)]) + _GRAD
        return found

    building = program.current_block_idx
    made: List[Any] = []
    for parent, _ in tape.blocks:
        made.append(program._create_block(block.idx if parent is None else made[parent].idx))
    program.current_block_idx = building
    for new, (_, forward) in zip(made, tape.blocks):
        if forward is not None:
            new._set_forward_block_idx(made[forward].idx)
    values: Dict[Hashable, Any] = dict(zip(tape.inputs, inputs))
    for where, name, kind, dtype, shape, lod_level, stop_gradient, persistable in tape.variables:
        at = block if where is None else made[where]
        shaped = {} if kind != _DENSE else {"dtype": dtype, "shape": shape, "lod_level": lod_level}
        values[name] = at.create_var(name=renamed(name), type=kind, stop_gradient=stop_gradient,
                                     persistable=persistable, **shaped)
    for (where, recorded, held), stack in zip(tape.ops, tape.stacks.for_call()):
        desc = _append_copy(block if where is None else made[where], recorded, stack, renamed)
        for name, listed, indices in held:
            if listed:
                desc.set_blocks_attr(name, [made[index].desc for index in indices])
            else:
                desc.set_block_attr(name, made[indices[0]].desc)
    for index in tape.stopped:
        inputs[index].stop_gradient = True
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
