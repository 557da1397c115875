"""A body's ops recorded and replayed in PIR (`replay.Tapes`).

A tape holds the ops a body appended to the block being built, themselves: a replay clones
each at the insertion point with its operands mapped to the call's own values
(`Operation.clone` with an `IrMapping`, paddle 3.3.1, as decomposition/recompute.py clones
ops), which keeps each op's attributes (its results' stop_gradient among them) and adds its
results to the mapping. The recorded ops must still exist then, as recorded: a tape belongs
to the program it was recorded in and to the time before the runtime inlines ops there
(`forget`, called by `ops.inline_op`, which moves them and rewires what they read), and
`environment` makes a call in another program, or after a `forget` there, unlike the recorded
ones. That state is the program's own (its epoch, a token on the program object), not this
module's: no build state lives in a module global.
Forward's ops are recorded: backward's are inlined as soon as built (`backward_tapes`).

A body is recorded only when what it built is self-contained: ops in the block being built
alone (the blocks around it keep their op counts), none holding blocks of its own, every
operand an input of the body or a result of an op of the tape.
"""
import contextlib
from typing import Any, Callable, Hashable, Iterator, List, Optional, Set

import paddle

from ..frames import RecordedStacks

backward_tapes = False
"""A backward's ops are inlined as soon as autodiff has built them (`double_backward.py`), its
tape with them: each backward is built by running it."""
call_tapes = False  # backward is built when autodiff asks, after the op

_EPOCH = "_p2s_tape_epoch"
"""The attribute of a program holding its epoch: a token that names the program and the time
since its ops last moved (`forget` gives it another)."""


class PirTape:
    """A forward body's ops as recorded (`replay.Tape`)."""

    __slots__ = ("inputs", "ops", "stacks", "_refs")

    def __init__(self, inputs: List[Any], stacks: RecordedStacks) -> None:
        self.inputs = inputs
        self.ops: List[Any] = []
        self.stacks = stacks
        self._refs: Set[str] = {value.id for value in inputs}

    def ref(self, value: Any) -> Optional[Hashable]:
        key = value.id if isinstance(value, paddle.pir.Value) else None
        return key if key in self._refs else None


def environment() -> Hashable:
    """The program tapes are recorded in and its epoch, and what ops take from the guards in
    force as they are made: role, chunk, device."""
    program = paddle.static.default_main_program()
    epoch = getattr(program, _EPOCH, None)
    if epoch is None:  # a program no tape was recorded in yet
        epoch = _new_epoch(program)
    return epoch, paddle.pir.get_op_role(), paddle.pir.get_chunk_id(), paddle.base.framework._current_device


def forget(program: Any) -> None:
    """The recorded ops of `program` may go now (inlined, dropped): no call there is alike to
    one recorded before."""
    _new_epoch(program)


def _new_epoch(program: Any) -> Hashable:
    # A fresh token: a recording's key holds its epoch, so a token is never reused while a
    # recording of it is kept (paddle 3.3.1's pir.Program takes attributes, and the framework
    # hands out one Python object per program).
    epoch = object()
    setattr(program, _EPOCH, epoch)
    return epoch


@contextlib.contextmanager
def recording(inputs: List[Any]) -> Iterator[List[Optional[PirTape]]]:
    """Around a body built on `inputs`: the list yielded holds its tape after it, or None."""
    block = paddle.pir.get_current_insertion_point().block()
    holder: List[Optional[PirTape]] = [None]
    first_op, around_before = len(block.ops), _around(block)
    stacks = RecordedStacks()
    yield holder
    if _around(block) != around_before:
        return
    tape = PirTape(list(inputs), stacks)
    for op in block.ops[first_op:]:
        if op.num_regions() or any(value.initialized() and value.id not in tape._refs  # an optional input left out: none
                                   for value in op.operands_source()):
            return
        tape.ops.append(op)
        tape._refs.update(value.id for value in op.results())
        stacks.add(list(op.callstack or []))
    holder[0] = tape


def _around(block: Any) -> List[int]:
    """The op counts of the blocks around `block`, up to the program's first (their own ops:
    `Block.num_ops` counts those of the blocks inside too)."""
    counts = []
    while block.parent_block is not None:
        block = block.parent_block
        counts.append(len(block.ops))
    return counts


def replay(tape: PirTape, inputs: List[Any]) -> Callable[[Hashable], Any]:
    """Clone `tape`'s ops on `inputs` at the insertion point; what each ref is now."""
    mapping = paddle.pir.IrMapping()
    values = {}
    for old, new in zip(tape.inputs, inputs):
        mapping.add(old, new)
        values[old.id] = new
    options = paddle.pir.CloneOptions(False, True, True)
    for op, stack in zip(tape.ops, tape.stacks.for_call()):
        clone = op.clone(mapping, options)
        if stack is not None:
            clone.callstack = stack
        for old, new in zip(op.results(), clone.results()):
            values[old.id] = new
    return values.__getitem__
