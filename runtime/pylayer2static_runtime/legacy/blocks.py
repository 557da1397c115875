"""The legacy Program IR's sub-blocks as ops hold them (paddle 2.6.2 base/framework.py): what
inlining (`inline.py`), dropping unused backward ops (`unused.py`), the adapter, the op's
renames (`pylayer_op.py`) and the hooks walk."""
from typing import Any, Container, Dict, Iterable, List, Optional, Set, Tuple

from paddle.base import core

_BLOCK_KINDS = (core.AttrType.BLOCK, core.AttrType.BLOCKS)
_block_attrs: Dict[str, Tuple[Tuple[str, Any], ...]] = {}
"""Per op type, its attributes that hold blocks, and their kinds: an op type's attributes are
its proto's, and asking each attribute's kind is a call into C++ per attribute on every op
walked (some 20 ms of a chain of 48 small PyLayers' builds and inlining, by cProfile)."""


def child_blocks(program: Any, op: Any, names: Optional[Container[str]] = None) -> List[Any]:
    """The blocks op's attributes hold (a conditional_block's, a while's, a pylayer's); only
    those of the attributes `names` when given."""
    attrs = _block_attrs.get(op.type)
    if attrs is None:
        attrs = _block_attrs[op.type] = tuple(
            (name, kind) for name in op.attr_names for kind in [op.attr_type(name)] if kind in _BLOCK_KINDS)
    blocks = []
    for name, kind in attrs:
        if (names is not None and name not in names) or not op.has_attr(name):
            continue
        if kind == core.AttrType.BLOCK:
            blocks.append(program.block(op._block_attr_id(name)))
        else:
            blocks.extend(program.block(i) for i in op._blocks_attr_ids(name))
    return blocks


def blocks_within(program: Any, ops: Iterable[Any], names: Optional[Container[str]] = None) -> List[Any]:
    """The blocks `ops` hold and, in turn, the blocks their ops hold (`child_blocks`, with
    `names`)."""
    found: List[Any] = []
    pending = [child for op in ops for child in child_blocks(program, op, names)]
    while pending:
        block = pending.pop()
        found.append(block)
        pending.extend(child for op in block.ops for child in child_blocks(program, op, names))
    return found


def names_in_other_blocks(program: Any) -> Set[str]:
    """The names the program's blocks but the global one read or write."""
    return {name for block in program.blocks[1:] for op in block.ops
            for name in op.input_arg_names + op.output_arg_names}
