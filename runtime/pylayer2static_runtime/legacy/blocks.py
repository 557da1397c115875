"""The legacy Program IR's sub-blocks as ops hold them (paddle 2.6.2 base/framework.py): what
inlining (`inline.py`), dropping unused backward ops (`unused.py`) and the adapter walk."""
from typing import Any, List, Set

from paddle.base import core


def child_blocks(program: Any, op: Any) -> List[Any]:
    """The blocks op's attributes hold (a conditional_block's, a while's, a pylayer's)."""
    blocks = []
    for name in op.attr_names:
        kind = op.attr_type(name)  # a call into C++ per attribute, on every op walked: asked once
        if kind == core.AttrType.BLOCK:
            blocks.append(program.block(op._block_attr_id(name)))
        elif kind == core.AttrType.BLOCKS:
            blocks.extend(program.block(i) for i in op._blocks_attr_ids(name))
    return blocks


def names_in_other_blocks(program: Any) -> Set[str]:
    """The names the program's blocks but the global one read or write."""
    return {name for block in program.blocks[1:] for op in block.ops
            for name in op.input_arg_names + op.output_arg_names}
