"""A PyLayer's gradient op inlined as autodiff builds it, so a double backward works (paddle 3.x).

PIR gives the pylayer op autodiff builds as a PyLayer's gradient no backward of its own
(paddle 3.3.1 `PyLayerOp::Vjp`): a second autodiff through it fails. `core.call_vjp` (what
paddle 3.3.1 ir_backward.py `append_backward_ops` calls for a pylayer op) is followed by
inlining each such op it built for a transpiled PyLayer (`inlining_grad_ops`, installed by
`hooks.py`), so a second autodiff differentiates backward's ops, as eager differentiates the
ops backward ran under create_graph; the gradient of one that must stay is refused, naming
the class.
"""
import functools
import logging
from typing import Any, Callable, List, Optional

import paddle

from ..body import read_after
from ..core import scope
from ..core.errors import PyLayerContractError
from .ops import CLASS_ATTR, PUSH, PYLAYER, inline_op, is_in_place, op_ids, pops, replaced, sub_block, users_named, why_kept
from .unused import mark_backward

LOG = logging.getLogger("pylayer2static_runtime")

GRAD_CLASS_ATTR = "p2s_pylayer_grad"
"""On a pylayer op autodiff built as a PyLayer's gradient and that stays one (`_inline_grad_op`):
the PyLayer's class, for the error its own gradient raises."""


def _outer_view(forward_op: Any, value: Any) -> Optional[Any]:
    """`value`, which forward's sub-block pushes for backward, as the ops after `forward_op`
    see it: itself if it comes from outside (an input of apply), the op's result if forward
    returns it; None if it is made inside and kept there."""
    body = sub_block(forward_op)
    made_by = value.get_defining_op()
    if made_by is None or made_by.id() not in op_ids(body):
        return value
    yielded = body.ops[-1].operands_source()
    return next((result for inner, result in zip(yielded, forward_op.results())
                 if inner.initialized() and inner.is_same(value)), None)


def _read_saved_directly(forward_op: Any, pop: Any) -> None:
    """Backward reads the tensors forward saved from apply's inputs and outputs themselves,
    not their copies through the pipe, which autodiff cannot see through."""
    stack = pop.operand_source(0).get_defining_op()
    pushes = users_named(stack.result(1), PUSH)
    if len(pushes) != 1:
        return
    for popped, pushed in zip(pop.results(), pushes[0].operands_source()[1:]):
        outer = _outer_view(forward_op, pushed)
        # What was pushed is a copy taken before any later in-place write; the value is not.
        if outer is not None and not any(is_in_place(user) for user in outer.all_used_ops()):
            popped.replace_all_uses_with(outer)
    # A pop nobody reads goes: the next autodiff through `forward_op` pops its stack again,
    # and PIR lets a stack's outlet have one pop only.
    if all(value.use_empty() for value in pop.results()):
        pop.erase()


def _pops_in_use(grad_op: Any) -> bool:
    return any(not value.use_empty() for pop in pops(sub_block(grad_op)) for value in pop.results())


def _why_not_differentiable(grad_op: Any) -> str:
    """Why `grad_op` cannot be inlined as autodiff builds it, or '' if it can."""
    if _pops_in_use(grad_op):
        return ("backward reads a tensor forward computed and saved with ctx.save_for_backward, "
                "which a static graph carries to backward as a copy no gradient goes through")
    for op in sub_block(grad_op).ops[:-1]:
        # The autodiff running prunes the ops it built whose first result nothing uses: an
        # op writing its argument in place (all_reduce) or with no result would go.
        if op.num_results() == 0 or is_in_place(op):
            return f"backward's {op.name()} writes in place or has no result"
    return why_kept(grad_op)


def _inline_grad_op(forward_op: Any, grad_op: Any) -> Optional[List[Any]]:
    """Inline `grad_op`, the pylayer op autodiff just built as `forward_op`'s gradient; the
    values in place of its results, or None if it stays (named, `GRAD_CLASS_ATTR`).

    PIR gives such an op no backward of its own (paddle 3.3.1 `PyLayerOp::Vjp`): autodiff of
    it, a double backward, fails ("backward function id of pylayer op should be
    non-negative"). Its ops in its parent block are ordinary ops, which autodiff
    differentiates, as eager differentiates the ops backward ran under create_graph. It is
    inlined as it is built, as the values autodiff hands out are its results.
    """
    # What no gradient uses goes once the program is inlined (`unused.drop_unused`), here or
    # later (`ops.inline_pylayers`) for an op that stays a pylayer op for now.
    mark_backward(sub_block(grad_op).ops[:-1])
    # Inside control flow, autodiff gives the gradient ops a block of their own, from which
    # forward's values are reached through the control flow op's own plumbing.
    if forward_op.get_parent_block() == grad_op.get_parent_block():
        for pop in pops(sub_block(grad_op)):
            _read_saved_directly(forward_op, pop)
    why = _why_not_differentiable(grad_op)
    if why:
        LOG.debug("gradient pylayer op kept (%s): %s", why, grad_op)
        grad_op.set_str_attr(GRAD_CLASS_ATTR, forward_op.str_attr(CLASS_ATTR))
        return None
    return inline_op(grad_op)


def _refuse_gradient_of_kept(grad_op: Any) -> None:
    cls = grad_op.str_attr(GRAD_CLASS_ATTR)
    raise PyLayerContractError(
        f"a gradient of PyLayer {cls}'s backward was asked for (double backward: paddle.grad "
        "with create_graph=True, or paddle.static.gradients of a gradient), which a static graph "
        f"cannot give: {_why_not_differentiable(grad_op)}; in {cls}, save apply's inputs (or "
        "outputs) and recompute the rest in backward, out of place"
    )


def _grad_ops_built(block: Any, count: int) -> List[Any]:
    """The pylayer op `core.call_vjp` just built in `block` (which held `count` ops before), if any.

    paddle 3.3.1 `PyLayerOp::Vjp` builds a combine op, then the pylayer op, at the insertion
    point: the op now just before it. Found so rather than by a pass over the block per
    PyLayer call (quadratic in a large model).
    """
    if block.num_ops() == count:
        return []
    last = paddle.pir.get_current_insertion_point().prev()
    return [last] if last.name() == PYLAYER else []


def _read_after_forward(forward_op: Any, grads: List[List[Any]]) -> List[List[Any]]:
    """`grads` with the first gradient read after `forward_op`'s results (`body.read_after`).

    A PyLayer applied while a backward is built (a recompute re-running its block) and
    differentiated there (`paddle.grad`) keeps its gradient op, which pops what forward pushed,
    while nothing reads forward's results: the autodiff building the enclosing backward prunes
    the op whose results nothing uses (paddle 3.3.1 ir_backward.py `calc_gradient_helper`), and
    the pipe is left with a pop and no push ("the inlet value of container op can only be used
    once" when the program runs)."""
    after = [value for value in forward_op.results() if value.initialized()]
    for slot in grads:
        for k, grad in enumerate(slot):
            if grad is not None and grad.initialized():
                slot[k] = read_after([grad], after)[0]
                return grads
    return grads


def inlining_grad_ops(call_vjp: Callable[..., Any]) -> Callable[..., Any]:
    """`core.call_vjp` (what paddle 3.3.1 ir_backward.py `append_backward_ops` calls for a
    pylayer op), then each pylayer op it built for a transpiled PyLayer inlined; the
    gradient of one that stayed is refused."""

    @functools.wraps(call_vjp)
    def call_vjp_and_inline(op: Any, *args: Any) -> Any:
        if op.name() != PYLAYER:
            return call_vjp(op, *args)
        if op.has_attr(GRAD_CLASS_ATTR):
            _refuse_gradient_of_kept(op)
        if not op.has_attr(CLASS_ATTR):
            return call_vjp(op, *args)
        block = paddle.pir.get_current_insertion_point().block()
        count = block.num_ops()
        grads = call_vjp(op, *args)
        for grad_op in _grad_ops_built(block, count):
            results = list(grad_op.results())
            values = _inline_grad_op(op, grad_op)
            if values is not None:
                grads = [[replaced(grad, results, values) for grad in slot] for slot in grads]
            elif scope.current().backward_depth and op.get_parent_block() == block:
                grads = _read_after_forward(op, grads)
        return grads

    return call_vjp_and_inline
