"""No gradient work nobody needs: the ops of an inlined PyLayer backward whose results nothing
reads are dropped (paddle 2.6.2; `pir/unused.py` does this on PIR).

A PyLayer's backward computes what its author wrote: the gradient of a frozen weight, of an
input that stops gradient, a value only a branch returning None read. Autodiff never builds
such work for a built-in op, but the `pylayer_grad` op's backward block holds it all, and once
inlined (`inline.py`) nothing reads it, while the executor runs every op it is given. So the
ops inlining takes out of backward blocks are listed, and one sweep from the global block's
last op to its first drops each of them whose outputs no later op reads (`drop_unused`),
counting as read what the program's other blocks use and the names read from outside it by
name, so a chain of such ops goes in the one sweep. Kept: an op with effects (`core.effects`),
with blocks of its own, with no output, or writing a persistable variable. Numbers do not
change: what goes was read by nothing.
"""
import logging
from typing import Any, List, Set

from paddle.base import core

from ..core.effects import has_effects
from .blocks import child_blocks, names_in_other_blocks

LOG = logging.getLogger("pylayer2static_runtime")


def _droppable(block: Any, op: Any, read: Set[str]) -> bool:
    outputs = [name for name in op.output_arg_names if name != core.kEmptyVarName()]
    if not outputs or has_effects(op.type) or child_blocks(block.program, op):
        return False
    for name in outputs:
        var = block._find_var_recursive(name)
        if name in read or var is None or var.persistable:
            return False
    return True


def _remove_unused_variables(block: Any, names: Set[str]) -> None:
    """Take out of `block` the variables of `names` no op of it uses any more."""
    used = {name for op in block.ops for name in op.input_arg_names + op.output_arg_names}
    for name in names - used:
        if block.has_var(name) and not block.var(name).persistable:
            block._remove_var(name, sync=False)


def drop_unused(program: Any, backward_ops: List[Any], kept: Set[str]) -> int:
    """Drop those of `backward_ops` (ops of the global block inlined from PyLayer backwards)
    whose outputs nothing reads after them; `kept`: names read from outside the program by
    name. The number dropped."""
    block = program.global_block()
    ours = {id(op) for op in backward_ops}
    read = set(kept) | names_in_other_blocks(program)
    dropped: List[int] = []
    written: Set[str] = set()
    for at in reversed(range(len(block.ops))):
        op = block.ops[at]
        if id(op) in ours and _droppable(block, op, read):
            dropped.append(at)
            written.update(op.output_arg_names)
            continue
        read.update(op.input_arg_names)
    for at in dropped:   # last first: the positions of those still to go hold
        block._remove_op(at, sync=False)
    _remove_unused_variables(block, written)
    if dropped:
        LOG.debug("dropped %d unused op(s) of PyLayer backwards", len(dropped))
    return len(dropped)
