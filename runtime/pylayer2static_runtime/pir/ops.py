"""PIR op surgery: a pylayer op replaced by its sub-block's ops (paddle 3.x).

A `pylayer` op exists for autodiff: it keeps forward's ops apart so that the gradient
through it is backward's ops, not forward's. Once the gradient ops are in the program,
nothing needs the boundary, and it costs: paddle 3.3.1's interpreter runs each sub-block
in an interpreter of its own (with its own thread pool), and the tensors backward saves
cross through a `cf.stack_create` pipe (`cf.tuple_push` in forward, `cf.tuple_pop` in
backward), copied each step. So every pylayer op of a program an executor runs or
`jit.save` exports is replaced by its sub-block's ops (`inline_pylayers`), and each pipe
whose push and pop end in one block, push first, by the pushed values themselves
(`short_circuit_pipes`). Where that happens is `hooks.py`'s; this module only changes
programs.

Numbers do not change: the ops are the ones the sub-blocks held, in the same order, reading
the same values. A pylayer op that cannot be inlined as it is (a sub-block with arguments,
a yield that does not match its results) is kept, and why is logged at debug level
(`logging.getLogger("pylayer2static_runtime")`). A forward that returns one of its
inputs as it is gets a copy in its place (`assign`), as the op's output was a tensor of its
own that later in-place writes could not reach the input through. Eager's output is the input
itself there, so a program that writes either in place after the call is refused before it is
trained, run for inference or exported (`refuse_aliased_writes`).
"""
import logging
from typing import Any, Dict, List, Optional, Set

import paddle

from ..core.errors import aliased_write_error
from . import tape

LOG = logging.getLogger("pylayer2static_runtime")

PYLAYER = "pd_op.pylayer"
_YIELD = "cf.yield"
PUSH = "cf.tuple_push"
POP = "cf.tuple_pop"
CLASS_ATTR = "p2s_pylayer"
"""The attribute naming a PyLayer class (module.qualname) on its pylayer op (`adapter.py`)."""
MARK = "pylayer2static:"
"""Ops taken out of a PyLayer's pylayer op get `{MARK}{class}` appended to their
`struct_name`, the structure path the framework keeps on ops (`/Linear_1/`) and the one
attribute of its own that paddle 3.3.1 serializes for any op: an exported program says which
PyLayers it holds inlined, and training it after `jit.load` is refused
(`hooks.py` `_refuse_inlined_training`)."""


def op_ids(block: Any) -> Set[int]:
    # Python wrappers of one block or op are not one object: ops are compared by id.
    return {op.id() for op in block.ops}


def sub_block(op: Any) -> Any:
    """The (first) sub-block of a pylayer op."""
    return next(iter(op.blocks()))


def users_named(value: Any, name: str) -> List[Any]:
    """The ops named `name` that use `value`."""
    return [user for user in value.all_used_ops() if user.name() == name]


def pops(block: Any) -> List[Any]:
    return [op for op in block.ops if op.name() == POP]


def is_in_place(op: Any) -> bool:
    """Whether `op` writes its input in place: PIR names such ops `..._`, and their result
    shares the input's memory."""
    return op.name().endswith("_")


def _copies_of_outer(op: Any, body: Any, yielded: List[Any]) -> List[Any]:
    """`yielded`, each value from outside the sub-block replaced by a copy made before `op`."""
    inside = op_ids(body)

    def outer(value: Any) -> bool:
        if not value.initialized():
            return False  # None: no value, and no use (`why_kept`)
        return value.get_defining_op() is None or value.get_defining_op().id() not in inside

    if not any(outer(value) for value in yielded):
        return yielded
    previous = paddle.pir.get_current_insertion_point()
    paddle.pir.set_insertion_point(op)
    try:
        copies: List[Any] = []  # (value, its copy): one copy per value yielded more than once
        result = []
        for value in yielded:
            if outer(value):
                copy = next((c for v, c in copies if v.is_same(value)), None)
                if copy is None:
                    copy = paddle._C_ops.assign(value)
                    copies.append((value, copy))
                value = copy
            result.append(value)
        return result
    finally:
        paddle.pir.set_insertion_point(previous)


def _writes_in_place(user: Any, value: Any) -> bool:
    """Whether op `user` writes `value` in place: one of the operands its in-place map
    names (paddle 3.x `core.pir.get_op_inplace_info`, {result: operand}, as dy2static's
    program_translator.py reads it; `batch_norm_` writes its mean and variance, not x)."""
    written = paddle.core.pir.get_op_inplace_info(user).values()
    return any(user.operand_source(index).is_same(value) for index in written)


def _written_in_place_after(op: Any, values: List[Any], position: Dict[int, int]) -> Optional[Any]:
    """An op that writes one of `values` in place after `op` (in `op`'s block after it, or
    in a block inside a later op), or None; `position` is where each op of that block is."""
    for value in values:
        for user in value.all_used_ops():
            if not _writes_in_place(user, value):
                continue
            outer = user
            while outer is not None and outer.id() not in position:
                outer = outer.get_parent_block().parent_op
            if outer is None or position[outer.id()] > position[op.id()]:
                return user
    return None


def refuse_aliased_writes(block: Any) -> None:
    """Refuse a program that writes in place, after a PyLayer's call, an input its forward
    returned as it is, or that output.

    Eager's output is then the input tensor itself (paddle 3.3.1 and 2.6.2 eager PyLayer:
    `y is x`), so such a write changes both; a static graph's output is a value of its own
    (the pylayer op's result, a copy once inlined), so the results would differ silently.
    Checked on programs before autodiff, for inference and for export: a pure static
    program's optimizer writes parameters in place after every op, so the executor's copy is
    not checked.
    """
    ops = block.ops
    position = {op.id(): i for i, op in enumerate(ops)}  # listed once per block, not per output
    for op in ops:
        for inner in op.blocks():
            refuse_aliased_writes(inner)
        if op.name() != PYLAYER or not op.has_attr(CLASS_ATTR) or why_kept(op):
            continue
        body = sub_block(op)
        inside = op_ids(body)
        operands = op.operands_source()
        for result, value in zip(op.results(), body.ops[-1].operands_source()):
            made = value.get_defining_op() if value.initialized() else None
            if not value.initialized() or (made is not None and made.id() in inside):
                continue
            writer = _written_in_place_after(op, [value, result], position)
            if writer is None:
                continue
            index = next((k for k, operand in enumerate(operands) if operand.is_same(value)), None)
            raise aliased_write_error(op.str_attr(CLASS_ATTR), None if index is None else index + 1, writer.name())


def why_kept(op: Any) -> str:
    """Why `op` cannot be inlined as it is, or '' if it can."""
    blocks = list(op.blocks())
    if len(blocks) != 1:
        return f"{len(blocks)} sub-blocks"
    body = blocks[0]
    if body.args() or body.kwargs():
        return "its sub-block takes arguments"
    ops = body.ops
    if not ops or ops[-1].name() != _YIELD:
        return "its sub-block does not end in a yield"
    yielded = ops[-1].operands_source()
    if len(yielded) != op.num_results():
        return f"its yield gives {len(yielded)} value(s) for {op.num_results()} result(s)"
    for value, result in zip(yielded, op.results()):
        if not value.initialized() and not result.use_empty():
            return "a result that is used has no value (a gradient backward gave as None)"
    return ""


def inline_op(op: Any) -> Optional[List[Any]]:
    """Replace `op` by its sub-block's ops; the values now in place of its results, or None
    (and a debug log) if it must stay."""
    why = why_kept(op)
    if why:
        LOG.debug("pylayer op kept (%s): %s", why, op)
        return None
    tape.forget(op.get_parent_block().program)  # the ops of its block move: a tape of them is no more
    body = sub_block(op)
    ops = body.ops
    terminator = ops[-1]
    yielded = _copies_of_outer(op, body, list(terminator.operands_source()))
    label = f"{MARK}{op.str_attr(CLASS_ATTR)}/" if op.has_attr(CLASS_ATTR) else ""
    for inner in ops[:-1]:
        inner.move_before(op)
        if label and inner.name() != PYLAYER:
            path = inner.str_attr("struct_name") if inner.has_attr("struct_name") else "/"
            inner.set_str_attr("struct_name", path + label)
    for result, value in zip(op.results(), yielded):
        if value.initialized():
            result.replace_all_uses_with(value)
    op.erase()
    return yielded


def inline_block(block: Any) -> int:
    """Inline every pylayer op of `block`, also those inlining brings into it, and of the
    blocks inside its other ops; the number inlined."""
    count = 0
    kept: Set[int] = set()
    while True:
        pending = [op for op in block.ops if op.name() == PYLAYER and op.id() not in kept]
        if not pending:
            break
        for op in pending:
            if inline_op(op) is not None:
                count += 1
            else:
                kept.add(op.id())
    for op in block.ops:
        for inner in op.blocks():
            count += inline_block(inner)
    return count


def _index_in_block(op: Any, block: Any) -> int:
    """Where `op` is among `block`'s ops, -1 if it is not one of them."""
    return next((i for i, other in enumerate(block.ops) if other.id() == op.id()), -1)


def short_circuit_pipes(block: Any) -> None:
    """Each stack whose one push and one pop are in one block, push first: the pop's
    results become the pushed values and the stack goes; a push nobody pops goes too."""
    stacks = []
    ops = block.ops
    # Where each op of `block` is, listed once (not once per pipe): erasing the pushes and
    # pops below keeps the others in their order, and each push or pop has one stack.
    position = {op.id(): i for i, op in enumerate(ops)}
    for op in ops:
        for inner in op.blocks():
            short_circuit_pipes(inner)
        if op.name() == "cf.stack_create":
            stacks.append(op)
    # Pushes and pops are erased below: ops are listed first, and only stacks are visited
    # after that (a wrapper of an erased op points at freed memory).
    for op in stacks:
        _, inlet, outlet = op.results()
        pushes = users_named(inlet, PUSH)
        pops = users_named(outlet, POP)
        if len(pushes) != 1 or len(pops) > 1:
            continue
        push = pushes[0]
        if pops:
            pop = pops[0]
            if pop.id() in position:
                push_first = 0 <= position.get(push.id(), -1) < position[pop.id()]
            else:
                home = pop.get_parent_block()
                push_first = 0 <= _index_in_block(push, home) < _index_in_block(pop, home)
            if not push_first:
                continue
            for result, value in zip(pop.results(), push.operands_source()[1:]):
                result.replace_all_uses_with(value)
            pop.erase()
        push.erase()
        if all(value.use_empty() for value in op.results()):
            op.erase()


def inline_pylayers(program: Any) -> int:
    """Inline the pylayer ops of `program` and short-circuit their pipes; the number inlined."""
    count = inline_block(program.global_block())
    if count:
        short_circuit_pipes(program.global_block())
        LOG.debug("inlined %d pylayer op(s)", count)
    return count


def replaced(value: Any, results: List[Any], values: List[Any]) -> Any:
    """`value`, or what replaced it if it is one of an inlined op's `results`."""
    if value is None:
        return None
    return next((new for result, new in zip(results, values) if value.is_same(result)), value)


_RUNNABLE_CACHES = ("name_value_map", "x_values", "param_values", "out_values",
                    "x_grad_values", "param_grad_values", "out_grad_values")


def forget_values(runnable: Any) -> None:
    """Make a dy2static `RunnableProgram` look its values up again (its ops changed)."""
    for name in _RUNNABLE_CACHES:
        runnable.__dict__.pop(name, None)
