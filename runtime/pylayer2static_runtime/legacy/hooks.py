"""Where Program IR programs meet the framework: every process-wide legacy patch, made by
`install` (paddle 2.6, and 3.x with PIR off).

Pylayer ops and their `pylayer_grad` ops are inlined (`inline.py`) in to_static's programs
through `PartialProgramLayer`'s hook (`__init__` sets it, `set_hooker` puts the framework's
own inside it), in `executor._add_feed_fetch_ops`'s copy of a static program, and in
`normalize_program` (exports); a program that writes in place what a forward returned as it
is is refused first (`refuse_aliased_writes`), and training a loaded export that holds a
PyLayer's ops inlined is refused (`_refusing_inlined_training`), and so is a gradient asked through the op autodiff
made of a PyLayer's backward (`_refusing_double_backward`). The programs to_static runs are
made from the global block alone once the inlining has left every other block empty
(`_global_block_alone`), and dy2static leaves the call stacks of the runtime's blocks as they
were made (`_leaving_runtime_blocks`).
"""
import contextlib
import functools
from typing import Any, Callable, Dict, Iterator, List, Optional, Set

import paddle
from paddle.base.framework import Program  # the Program IR's (paddle 2.6.2; 3.x with PIR off)

from .. import patch
from ..core.errors import PyLayerContractError, aliased_write_error, double_backward_error
from ..frames import user_line
from .blocks import blocks_within
from .inline import CLASS_ATTR, InliningHook, inline_pylayers, inline_training, inlined_classes, keep_sub_block_variables


class _BlocksKeptOnPop(list):
    """A program's block list whose `pop` leaves the list as it is (see `install`)."""

    def pop(self, index: Any = -1) -> Any:
        return self[index]


def _nested_forward_blocks_only(program: Any) -> None:
    """Each pylayer op inside another op's block holds its forward block alone, as
    `normalize_program` makes each op of the global block hold (paddle 2.6.2 static/io.py:
    an export runs no backward).

    Its prune (`Program._prune_with_input`, prune.cc) numbers the blocks it keeps anew but
    leaves each block's `forward_block_idx` as it was: a nested PyLayer's backward block (a
    PyLayer applied in a CheckpointFunction's function) kept there names a block past the end,
    or another one, and the inference predictor's graph building crashes on it (SIGSEGV in
    `BlockDesc::AllVars`)."""
    for block in program.blocks[1:]:
        for op in block.ops:
            ids = op._blocks_attr_ids("blocks") if op.type == "pylayer" else []
            if len(ids) > 1:
                op._update_desc_attr("blocks", [program.block(ids[0])])


def _keeping_block_ids(normalize: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(normalize)
    def normalize_program(*args: Any, **kwargs: Any) -> Any:
        clone = paddle.static.Program.clone

        def clone_keeping_block_ids(self: Any, *c_args: Any, **c_kwargs: Any) -> Any:
            copy = clone(self, *c_args, **c_kwargs)
            copy.blocks = _BlocksKeptOnPop(copy.blocks)
            _nested_forward_blocks_only(copy)
            return copy

        with patch.swapped("legacy.hooks.Program.clone", paddle.static.Program, "clone", clone_keeping_block_ids):
            normalized = normalize(*args, **kwargs)
        keep_sub_block_variables(args[0], normalized)
        refuse_aliased_writes(normalized)
        inline_pylayers(normalized)
        return normalized

    return normalize_program


def _writes(op: Any, names: Set[str]) -> bool:
    """Whether `op` writes one of `names` in place, as eager runs it: `set_value` (`x[i] = v`,
    out of place in this IR, in place in eager) or an op whose output is its input."""
    if op.type == "set_value":
        return bool(names.intersection(op.input("Input")))
    return bool(names.intersection(op.input_arg_names).intersection(op.output_arg_names))


def refuse_aliased_writes(program: Any) -> None:
    """Refuse a program that writes in place, after a PyLayer's call, an input its forward
    returned as it is, or that output (`pir/ops.py` `refuse_aliased_writes`, the same on PIR).

    The op's input is `op_inputs`' copy of the variable passed, and forward's block copies
    what it returns into the op's output (`assign`): a write of either, or of the variable
    passed, after the op reaches the other in eager, where the output is the input itself.
    """
    block = program.global_block()
    ops = block.ops
    copied_from = {op.output("Out")[0]: op.input("X")[0] for op in ops if op.type == "assign"}
    for at, op in enumerate(ops):
        ids = op._blocks_attr_ids("blocks") if op.type == "pylayer" and op.has_attr(CLASS_ATTR) else []
        if not ids:
            continue
        inputs, outputs = op.input("Input"), op.output("Out")
        for inner in program.block(ids[0]).ops:
            if inner.type != "assign" or inner.input("X")[0] not in inputs or inner.output("Out")[0] not in outputs:
                continue
            given = inner.input("X")[0]
            names = {given, copied_from.get(given, given), inner.output("Out")[0]}
            writer = next((later for later in ops[at + 1:] if _writes(later, names)), None)
            if writer is not None:
                raise aliased_write_error(op.attr(CLASS_ATTR), inputs.index(given) + 1, writer.type)


def _checked_and_inlined(init: Callable[..., Any]) -> Callable[..., Any]:
    """`PartialProgramLayer.__init__` (paddle 2.6.2 jit/dy2static/partial_program.py), which
    gets to_static's forward program before training or inference uses it: the aliasing check
    first, then the layer hands its programs to `InliningHook` as it makes them."""

    @functools.wraps(init)
    def init_checked(self: Any, main_program: Any, *args: Any, **kwargs: Any) -> None:
        refuse_aliased_writes(main_program)
        init(self, main_program, *args, **kwargs)
        self._hooker = InliningHook(self)

    return init_checked


def _inlining_after(set_hooker: Callable[..., Any]) -> Callable[..., Any]:
    """`PartialProgramLayer.set_hooker`: the framework's hook (`PrimHooker`) runs inside
    `InliningHook`, after the inlining."""

    @functools.wraps(set_hooker)
    def set_inner_hooker(self: Any, hooker: Any) -> None:
        set_hooker(self, InliningHook(self, hooker))

    return set_inner_hooker


def _inlined_classes(program_desc: Any) -> List[str]:
    block = program_desc.block(0)
    ops = [block.op(i) for i in range(block.op_size())]
    return inlined_classes(ops)


def _refusing_inlined_training(append_backward_desc: Callable[..., Any]) -> Callable[..., Any]:
    """`_ProgramHolder._append_backward_desc` (paddle 2.6.2 jit/translated_layer.py: the
    training program of a loaded export, built when it is first trained), refused for an
    export holding a PyLayer's forward ops inlined: autodiff would differentiate those, not
    the custom backward, silently. paddle 3.x builds the calls again instead (`pir/reload.py`)."""

    @functools.wraps(append_backward_desc)
    def append_backward_desc_unless_inlined(self: Any, program_desc: Any, *args: Any, **kwargs: Any) -> Any:
        classes = _inlined_classes(program_desc)
        if classes:
            raise PyLayerContractError(
                f"paddle {paddle.__version__} (legacy IR) cannot train this model loaded by paddle.jit.load: "
                f"it was saved with the forward of PyLayer {', '.join(classes)} inlined for inference "
                "(pylayer2static), its custom backward is not in the file, and on this IR it is not built "
                "again (paddle 3.x does), so it cannot be run in training mode either: call .eval() on it "
                "for inference, and train the original model"
            )
        return append_backward_desc(self, program_desc, *args, **kwargs)

    return append_backward_desc_unless_inlined


def _class_of_gradient_op(grad_op: Any) -> Optional[str]:
    """The PyLayer class named on the pylayer op whose backward `grad_op` (a `pylayer_grad`)
    runs: the op's second block is the gradient op's `backward_block` (paddle 2.6.2
    static_pylayer.py, pylayer_op.cc `PyLayerGradMaker`); None for an op the runtime did not
    build (the framework's own dy2static path)."""
    backward = grad_op._block_attr_id("backward_block")
    for block in grad_op.block.program.blocks:
        for op in block.ops:
            if op.type == "pylayer" and op.has_attr(CLASS_ATTR) and op._blocks_attr_ids("blocks")[1:2] == [backward]:
                return op.attr(CLASS_ATTR)
    return None


def _refusing_double_backward(append_backward_ops: Callable[..., Any]) -> Callable[..., Any]:
    """`backward._append_backward_ops_` (paddle 2.6.2 base/backward.py: the gradient ops of
    the ops on the path, for `paddle.grad`/`paddle.static.gradients` and `append_backward`),
    refused when the path holds a `pylayer_grad` op of a transpiled PyLayer: the framework
    has no gradient op for it and failed with "Neither operator pylayer_grad's GradOpMaker
    nor CompGradOpMaker has been registered", naming neither the class nor the user's line."""

    @functools.wraps(append_backward_ops)
    def append_backward_ops_unless_pylayer_grad(block: Any, ops: Any, *args: Any, **kwargs: Any) -> Any:
        for op in ops:
            class_path = _class_of_gradient_op(op) if op.type == "pylayer_grad" else None
            if class_path is not None:
                raise double_backward_error(class_path, user_line())
        return append_backward_ops(block, ops, *args, **kwargs)

    return append_backward_ops_unless_pylayer_grad


def _sub_blocks_empty(program: Any) -> bool:
    """Whether `program` has blocks besides the global one and none of them holds an op."""
    desc = program.desc
    return desc.num_blocks() > 1 and all(desc.block(i).op_size() == 0 for i in range(1, desc.num_blocks()))


@contextlib.contextmanager
def _flag(name: str, value: Any) -> Iterator[None]:
    """The framework flag `name` is `value` inside the block and what it was after it."""
    previous = paddle.get_flags(name)[name]
    paddle.set_flags({name: value})
    try:
        yield
    finally:
        paddle.set_flags({name: previous})


def _global_block_alone(make: Callable[..., Any]) -> Callable[..., Any]:
    """`PartialProgramLayer._get_forward_backward_program_form` and `_build_infer_program`
    (paddle 2.6.2 jit/dy2static/partial_program.py, 3.x alike): the programs to_static runs,
    made from its whole program by `add_build_strategy_for` (the program made an `ir::Graph`,
    the build strategy's passes, and a program again) and `_apply_inplace_pass` (a graph and
    back, once more), converted from only the global block when every other block is empty.

    With `FLAGS_convert_all_blocks` (on by default) each of those conversions makes a graph of
    every block of the program and a block again of each. Once the pylayer ops are inlined
    (`InliningHook`), their two blocks per call are left without ops (a ProgramDesc cannot drop
    a block): making the 8-block LoRA LM's two programs of tests/bench/construction.py (1,320
    ops, 116 empty blocks) took 0.60–0.90 s, 0.38–0.45 s from the global block alone. With the
    flag off a conversion makes a graph of the global block alone, as paddle did before 2.3
    (ir/graph.cc, graph_to_program_pass.cc), and orders its ops by their dependencies, in which
    the global block's own order is one (ir/graph_helper.cc `TopologySortOperations` visits the
    ops in that order): the same ops, in a program of one block
    (tests/e2e/test_runtime.py compares them). A block that holds ops (control flow the
    inlining kept) keeps the default.
    """

    @functools.wraps(make)
    def make_from_the_global_block(self: Any, program: Any, *args: Any, **kwargs: Any) -> Any:
        if not _sub_blocks_empty(program):
            return make(self, program, *args, **kwargs)
        with _flag("FLAGS_convert_all_blocks", False):
            return make(self, program, *args, **kwargs)

    return make_from_the_global_block


def _runtime_blocks(program: Any) -> List[Any]:
    """The blocks of the runtime's pylayer ops (`CLASS_ATTR`) and the blocks inside them."""
    found: Dict[int, Any] = {}
    for block in program.blocks:
        if block.idx in found:
            continue  # inside an op found before: walked below
        for op in block.ops:
            if op.type == "pylayer" and op.has_attr(CLASS_ATTR):
                found.update((inner.idx, inner) for inner in blocks_within(program, [op]))
    return list(found.values())


def _leaving_runtime_blocks(update: Callable[..., Any]) -> Callable[..., Any]:
    """`update_op_callstack_with_origin_info` (paddle 2.6.2 jit/dy2static/origin_info.py, as
    program_translator.py `ConcreteProgram.from_func_spec` calls it on the program it built):
    the blocks of the runtime's pylayer ops are left as they are.

    It rewrites every frame of every op's creation stack through dy2static's origin map, a
    string split and reformat per frame. The ops of those blocks got their stacks mapped
    through the same map as they were made (`adapter._CallStacks`, `frames.user_frames`) or
    right after the body (`rewrite_callstacks`): the pass changed none of the 1,318 there of the
    8-block LoRA LM of tests/bench/construction.py, and took 60–67 ms over its program (25 over
    its twin's); 16 ms without them. The other blocks (the model's own control flow) it maps,
    and a PIR program (paddle 3.x) whole."""

    @functools.wraps(update)
    def update_other_blocks(program: Any) -> Any:
        skipped = {block.idx for block in _runtime_blocks(program)} if isinstance(program, Program) else set()
        if not skipped:
            return update(program)
        others = [block for block in program.blocks if block.idx not in skipped]
        with patch.swapped("legacy.hooks.Program.blocks", program, "blocks", others):
            update(program)
        return program

    return update_other_blocks


def _then_inlined(add_feed_fetch_ops: Callable[..., Any]) -> Callable[..., Any]:
    """`_add_feed_fetch_ops` (paddle 2.6.2 base/executor.py `_get_program_and_executor`): the
    executor's copy of a static program, its pylayer ops and their `pylayer_grad` ops inlined
    (`inline.inline_training`); the user's program keeps its ops, so a later
    `paddle.static.gradients` still sees backward's."""

    @functools.wraps(add_feed_fetch_ops)
    def add_feed_fetch_ops_and_inline(*args: Any, **kwargs: Any) -> Any:
        program = add_feed_fetch_ops(*args, **kwargs)
        inline_training(program, 0, set())
        return program

    return add_feed_fetch_ops_and_inline


def install() -> None:
    """Let `paddle.jit.save` export a program with more than one `pylayer` op, inline pylayer
    ops where programs run (to_static's through `InliningHook`, the executor's copy of a
    static program) and are exported, make to_static's programs to run from the global block
    alone when the inlining left the others empty, have dy2static leave the call stacks of the
    runtime's blocks as they were made, refuse training a loaded export that holds a
    PyLayer's ops inlined, and refuse a gradient through a PyLayer's backward naming the class.

    paddle 2.6.2 and 3.3.1 static/io.py `normalize_program` drops each pylayer op's backward
    block with `copy_program.blocks.pop(block_id)`, by id, from the Python list of blocks:
    after the first pop the ids no longer match the list, so the second op's pop fails
    (IndexError: pop index out of range) or removes another block, and the forward blocks
    are then looked up by shifted ids. The pop removes nothing from the program's desc
    (the op's `blocks` attribute is what drops the backward block), so while it runs the
    list keeps its blocks and every id keeps naming its block.
    """
    from paddle.base import backward, executor
    from paddle.jit import translated_layer
    from paddle.jit.dy2static import partial_program, program_translator
    from paddle.static import io

    patch.install("legacy.hooks.io.normalize_program", io, "normalize_program", _keeping_block_ids)
    patch.install("legacy.hooks.PartialProgramLayer.__init__", partial_program.PartialProgramLayer, "__init__",
                  _checked_and_inlined)
    patch.install("legacy.hooks.PartialProgramLayer.set_hooker", partial_program.PartialProgramLayer, "set_hooker",
                  _inlining_after)
    patch.install("legacy.hooks.PartialProgramLayer._get_forward_backward_program_form",
                  partial_program.PartialProgramLayer, "_get_forward_backward_program_form", _global_block_alone)
    patch.install("legacy.hooks.PartialProgramLayer._build_infer_program", partial_program.PartialProgramLayer,
                  "_build_infer_program", _global_block_alone)
    patch.install("legacy.hooks.update_op_callstack_with_origin_info", program_translator,
                  "update_op_callstack_with_origin_info", _leaving_runtime_blocks)
    patch.install("legacy.hooks.executor._add_feed_fetch_ops", executor, "_add_feed_fetch_ops", _then_inlined)
    patch.install("legacy.hooks.refuse_double_backward", backward, "_append_backward_ops_", _refusing_double_backward)
    patch.install("legacy.hooks.refuse_inlined_training", translated_layer._ProgramHolder, "_append_backward_desc",
                  _refusing_inlined_training)
