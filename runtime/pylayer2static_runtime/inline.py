"""Pylayer ops inlined into their parent blocks in the programs PIR runs (paddle 3.x).

A `pylayer` op exists for autodiff: it keeps forward's ops apart so that the gradient
through it is backward's ops, not forward's. Once the gradient ops are in the program,
nothing needs the boundary, and it costs: paddle 3.3.1's interpreter runs each sub-block
in an interpreter of its own (with its own thread pool), and the tensors backward saves
cross through a `cf.stack_create` pipe (`cf.tuple_push` in forward, `cf.tuple_pop` in
backward), copied each step. So the programs executors run, and the programs `jit.save`
exports, get every pylayer op replaced by its sub-block's ops, and each pipe whose push
and pop end in one block, push first, by the pushed values themselves:

- to_static training: `PartialProgramLayer._append_backward` (paddle 3.3.1
  jit/dy2static/pir_partial_program.py; `_append_backward_desc` in 3.0.0) returns the program with its gradient ops, before
  it is split into the forward and backward programs; values are known there by name and
  the split finds its boundaries by marker ops, which inlining keeps (it removes only
  pylayer ops, pipe ops and yields);
- to_static inference (`model.eval()`): the `after_infer` hook of the same class;
- pure static programs: the executor's copy of the program, once fetch ops are added
  (paddle 3.3.1 base/executor.py `_get_pir_program_and_executor`): the user's program
  keeps its pylayer ops, so a later `paddle.static.gradients` still sees backward's ops;
- exports: the program `normalize_pir_program` (static/pir_io.py) makes for
  `save_inference_model` and `jit.save`, once its feed and fetch ops are added;
- a PyLayer's gradient: the pylayer op autodiff builds for it (`core.call_vjp`), as it is
  built, so that a second autodiff (double backward) differentiates its ops (`_inline_grad_op`).

An export's PyLayers' backward is not in the file (without inlining, a PIR export keeps only
an id into the saving process's registry), and autodiff of the inlined forward ops would
differ from the custom backward silently. So an export records each call (reload.py), and
training it after `paddle.jit.load` builds the calls again as pylayer ops; the inlined ops
also carry their class's name (`_MARK`), and building a training program that still holds
such ops (no record loaded, calls inside control flow) raises `PyLayerContractError` naming
the classes.

Numbers do not change: the ops are the ones the sub-blocks held, in the same order, reading
the same values. A pylayer op that cannot be inlined as it is (a sub-block with arguments,
a yield that does not match its results) is kept, and why is logged at debug level
(`logging.getLogger("pylayer2static_runtime")`). A forward that returns one of its
inputs as it is gets a copy in its place (`assign`), as the op's output was a tensor of its
own that later in-place writes could not reach the input through. Eager's output is the input
itself there, so a program that writes either in place after the call is refused before it is
trained, run for inference or exported (`refuse_aliased_writes`).
"""
import functools
import logging
from typing import Any, Callable, Dict, Iterator, List, Optional, Set

import paddle

from . import patch, reload
from .errors import PyLayerContractError, aliased_write_error

LOG = logging.getLogger("pylayer2static_runtime")

PYLAYER = "pd_op.pylayer"
_YIELD = "cf.yield"
_PUSH = "cf.tuple_push"
_POP = "cf.tuple_pop"
CLASS_ATTR = "p2s_pylayer"
"""The attribute naming a PyLayer class (module.qualname) on its pylayer op (op.py)."""
_MARK = "pylayer2static:"
"""Ops taken out of a PyLayer's pylayer op get `{_MARK}{class}` appended to their
`struct_name`, the structure path the framework keeps on ops (`/Linear_1/`) and the one
attribute of its own that paddle 3.3.1 serializes for any op: an exported program says which
PyLayers it holds inlined, and training it after `jit.load` is refused
(`_refuse_inlined_training`)."""


def _op_ids(block: Any) -> Set[int]:
    # Python wrappers of one block or op are not one object: ops are compared by id.
    return {op.id() for op in block.ops}


def _body(op: Any) -> Any:
    """The (first) sub-block of a pylayer op."""
    return next(iter(op.blocks()))


def _users(value: Any, name: str) -> List[Any]:
    """The ops named `name` that use `value`."""
    return [user for user in value.all_used_ops() if user.name() == name]


def _pops(block: Any) -> List[Any]:
    return [op for op in block.ops if op.name() == _POP]


def is_in_place(op: Any) -> bool:
    """Whether `op` writes its input in place: PIR names such ops `..._`, and their result
    shares the input's memory."""
    return op.name().endswith("_")


def _copies_of_outer(op: Any, body: Any, yielded: List[Any]) -> List[Any]:
    """`yielded`, each value from outside the sub-block replaced by a copy made before `op`."""
    inside = _op_ids(body)

    def outer(value: Any) -> bool:
        if not value.initialized():
            return False  # None: no value, and no use (`_why_kept`)
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
        if op.name() != PYLAYER or not op.has_attr(CLASS_ATTR) or _why_kept(op):
            continue
        body = _body(op)
        inside = _op_ids(body)
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


def _why_kept(op: Any) -> str:
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
    why = _why_kept(op)
    if why:
        LOG.debug("pylayer op kept (%s): %s", why, op)
        return None
    body = _body(op)
    ops = body.ops
    terminator = ops[-1]
    yielded = _copies_of_outer(op, body, list(terminator.operands_source()))
    label = f"{_MARK}{op.str_attr(CLASS_ATTR)}/" if op.has_attr(CLASS_ATTR) else ""
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
        pushes = _users(inlet, _PUSH)
        pops = _users(outlet, _POP)
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


GRAD_CLASS_ATTR = "p2s_pylayer_grad"
"""On a pylayer op autodiff built as a PyLayer's gradient and that stays one (`_inline_grad_op`):
the PyLayer's class, for the error its own gradient raises."""


def _outer_view(forward_op: Any, value: Any) -> Optional[Any]:
    """`value`, which forward's sub-block pushes for backward, as the ops after `forward_op`
    see it: itself if it comes from outside (an input of apply), the op's result if forward
    returns it; None if it is made inside and kept there."""
    body = _body(forward_op)
    made_by = value.get_defining_op()
    if made_by is None or made_by.id() not in _op_ids(body):
        return value
    yielded = body.ops[-1].operands_source()
    return next((result for inner, result in zip(yielded, forward_op.results())
                 if inner.initialized() and inner.is_same(value)), None)


def _read_saved_directly(forward_op: Any, pop: Any) -> None:
    """Backward reads the tensors forward saved from apply's inputs and outputs themselves,
    not their copies through the pipe, which autodiff cannot see through."""
    stack = pop.operand_source(0).get_defining_op()
    pushes = _users(stack.result(1), _PUSH)
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
    return any(not value.use_empty() for pop in _pops(_body(grad_op)) for value in pop.results())


def _why_not_differentiable(grad_op: Any) -> str:
    """Why `grad_op` cannot be inlined as autodiff builds it, or '' if it can."""
    if _pops_in_use(grad_op):
        return ("backward reads a tensor forward computed and saved with ctx.save_for_backward, "
                "which a static graph carries to backward as a copy no gradient goes through")
    for op in _body(grad_op).ops[:-1]:
        # The autodiff running prunes the ops it built whose first result nothing uses: an
        # op writing its argument in place (all_reduce) or with no result would go.
        if op.num_results() == 0 or is_in_place(op):
            return f"backward's {op.name()} writes in place or has no result"
    return _why_kept(grad_op)


def _inline_grad_op(forward_op: Any, grad_op: Any) -> Optional[List[Any]]:
    """Inline `grad_op`, the pylayer op autodiff just built as `forward_op`'s gradient; the
    values in place of its results, or None if it stays (named, `GRAD_CLASS_ATTR`).

    PIR gives such an op no backward of its own (paddle 3.3.1 `PyLayerOp::Vjp`): autodiff of
    it, a double backward, fails ("backward function id of pylayer op should be
    non-negative"). Its ops in its parent block are ordinary ops, which autodiff
    differentiates, as eager differentiates the ops backward ran under create_graph. It is
    inlined as it is built, as the values autodiff hands out are its results.
    """
    # Inside control flow, autodiff gives the gradient ops a block of their own, from which
    # forward's values are reached through the control flow op's own plumbing.
    if forward_op.get_parent_block() == grad_op.get_parent_block():
        for pop in _pops(_body(grad_op)):
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


def _inlining_grad_ops(call_vjp: Callable[..., Any]) -> Callable[..., Any]:
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
        before = _op_ids(block)
        grads = call_vjp(op, *args)
        for grad_op in [built for built in block.ops if built.id() not in before and built.name() == PYLAYER]:
            results = list(grad_op.results())
            values = _inline_grad_op(op, grad_op)
            if values is not None:
                grads = [[replaced(grad, results, values) for grad in slot] for slot in grads]
        return grads

    return call_vjp_and_inline


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


def _inline_runnable(runnable: Any) -> None:
    """Inline a dy2static `RunnableProgram`'s pylayer ops, forgetting the values it looked up."""
    if inline_pylayers(runnable.program):
        forget_values(runnable)


def _struct_names(block: Any) -> Iterator[str]:
    for op in block.ops:
        if op.has_attr("struct_name"):
            yield op.str_attr("struct_name")
        for inner in op.blocks():
            yield from _struct_names(inner)


def _inlined_classes(program: Any) -> List[str]:
    """The PyLayer classes whose ops `program` holds inlined, before any autodiff, also
    inside control flow."""
    paths = _struct_names(program.global_block())
    return sorted({part[len(_MARK):] for path in paths for part in path.split("/") if part.startswith(_MARK)})


def _refuse_inlined_training(runnable: Any) -> None:
    """A program `jit.save` exported with PyLayers inlined holds their forward ops only:
    autodiff would differentiate those, not the custom backward (a straight-through
    quantizer's gradient would be round's, zero). Loud, naming the classes."""
    classes = _inlined_classes(runnable.program)
    if classes:
        raise PyLayerContractError(
            f"this program was saved by paddle.jit.save with the forward of PyLayer {', '.join(classes)} "
            "inlined for inference (pylayer2static); its custom backward is not in the file, and the "
            f"record of its calls that pylayer2static writes beside it (PREFIX{reload.SUFFIX}) was not "
            "loaded with it or does not cover these calls (inside control flow), so the loaded model "
            "cannot be trained or run in training mode: call .eval() on it for inference, and train "
            "the original model"
        )


def _after_append_backward(append_backward: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(append_backward)
    def append_backward_and_inline(self: Any, *args: Any, **kwargs: Any) -> Any:
        training = args[0] if args else kwargs["train_runnable_program"]
        reload.rebuild_calls(training)
        _refuse_inlined_training(training)
        refuse_aliased_writes(training.program.global_block())
        runnable = append_backward(self, *args, **kwargs)
        _inline_runnable(runnable)
        return runnable

    return append_backward_and_inline


def _inlining_infer_hook(hook_base: type) -> type:
    class InlineOnInfer(hook_base):  # type: ignore[misc, valid-type]
        """`after_infer`: the inference program with its pylayer ops inlined."""

        def after_infer(self, infer_program: Any) -> Any:
            refuse_aliased_writes(infer_program.program.global_block())
            _inline_runnable(infer_program)
            infer_program.forward_range = (0, len(infer_program.program.global_block().ops))
            return infer_program

    return InlineOnInfer


def _with_infer_hook(init: Callable[..., Any], hook: type) -> Callable[..., Any]:
    @functools.wraps(init)
    def init_with_hook(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.add_hooker(hook())

    return init_with_hook


def _then_inline(
    make: Callable[..., Any], program_at: Callable[..., Any], inlining: Callable[[Any], int] = inline_pylayers
) -> Callable[..., Any]:
    """`make`, then the pylayer ops of the program `program_at(args, result)` inlined."""

    @functools.wraps(make)
    def make_and_inline(*args: Any, **kwargs: Any) -> Any:
        result = make(*args, **kwargs)
        inlining(program_at(args, kwargs, result))
        return result

    return make_and_inline


def install() -> None:
    """Inline pylayer ops where programs are handed to an executor or exported (above)."""
    from paddle.base import core, executor
    from paddle.jit.dy2static import pir_partial_program
    from paddle.static import io, pir_io

    layer = pir_partial_program.PartialProgramLayer
    hook = _inlining_infer_hook(pir_partial_program.PartialProgramLayerHook)
    # `_append_backward` in paddle 3.3.1, `_append_backward_desc` in 3.0.0; the same
    # `(self, train_runnable_program) -> RunnableProgram` in both.
    name = "_append_backward" if hasattr(layer, "_append_backward") else "_append_backward_desc"
    patch.install("inline.PartialProgramLayer._append_backward", layer, name, _after_append_backward)
    patch.install("inline.core.call_vjp", core, "call_vjp", _inlining_grad_ops)
    patch.install("inline.PartialProgramLayer.__init__", layer, "__init__", lambda init: _with_infer_hook(init, hook))
    patch.install("inline.executor._add_pir_fetch_ops", executor, "_add_pir_fetch_ops", lambda make: _then_inline(
        make, lambda args, kwargs, result: kwargs.get("program", args[0] if args else None)))
    # An export's calls are recorded as they are inlined, for training after jit.load.
    for module, key in ((pir_io, "inline.pir_io.normalize_pir_program"), (io, "inline.io.normalize_pir_program")):
        patch.install(key, module, "normalize_pir_program", lambda normalize: _then_inline(
            normalize, lambda args, kwargs, result: result, reload.inline_export))
