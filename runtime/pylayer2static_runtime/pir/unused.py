"""No gradient work nobody needs: the ops of an inlined PyLayer backward whose results nothing
uses are dropped (paddle 3.x).

A PyLayer's backward computes what its author wrote: the gradient of a frozen weight, of an
input that stops gradient, a value only a branch returning None read. Autodiff never builds
such work for a built-in op, but the pylayer op's backward block holds it all, and once inlined
nothing in the program reads it, while paddle 3.3.1's interpreter runs every op it is given.
So the ops taken out of a backward are marked as they are inlined (`mark_backward`, from
`double_backward.py`), and once a program's pylayer ops are inlined (`hooks.py`), one sweep
from its last op to its first drops each marked op whose results are all unused
(`drop_unused`), erasing its uses in turn, so a chain of such ops goes in the one sweep. Kept:
an op with effects (`core.effects`), with sub-blocks (control flow), with no result, or of the
control-flow dialect (the pipes backward's saved tensors cross). Numbers do not change: what
goes was read by nothing.
"""
import logging
from typing import Any, List

from ..core.effects import has_effects

LOG = logging.getLogger("pylayer2static_runtime")

BACKWARD_ATTR = "p2s_backward"
"""On the ops taken out of a PyLayer's backward until `drop_unused` has swept their block."""


def mark_backward(ops: List[Any]) -> None:
    """Mark `ops`, about to be inlined from a PyLayer's backward block, as backward's."""
    for op in ops:
        op.set_bool_attr(BACKWARD_ATTR, True)


def _droppable(op: Any) -> bool:
    return (op.num_results() > 0 and not op.name().startswith("cf.") and not list(op.blocks())
            and not has_effects(op.name()) and all(value.use_empty() for value in op.results()))


def _sweep(block: Any) -> int:
    """Drop `block`'s unused backward ops, last to first, and unmark the others (and those of
    the blocks inside its ops); the number dropped."""
    dropped = 0
    for op in reversed(block.ops):
        for inner in op.blocks():
            dropped += _sweep(inner)
        if not op.has_attr(BACKWARD_ATTR):
            continue
        if _droppable(op):
            op.erase()
            dropped += 1
        else:
            op.erase_attr(BACKWARD_ATTR)
    return dropped


def drop_unused(program: Any) -> int:
    """Drop the ops of `program` inlined from a PyLayer's backward whose results nothing uses;
    the number dropped."""
    dropped = _sweep(program.global_block())
    if dropped:
        LOG.debug("dropped %d unused op(s) of PyLayer backwards", dropped)
    return dropped
