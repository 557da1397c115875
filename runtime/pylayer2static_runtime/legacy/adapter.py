"""Adapter for the legacy Program IR (paddle 2.6, `paddle.static.Variable` tensors).

Read from paddle 2.6.2: python/paddle/static/nn/static_pylayer.py (`static_pylayer`:
forward and backward sub-blocks, backward outputs renamed to `<input>@GRAD`, the
temporary variables of `StaticPyLayerContext.saved_tensor` removed from the backward
block once it is complete) and python/paddle/jit/dy2static/py_layer.py (saved
variables are re-declared by name in the backward block; at run time the backward
block finds them in the forward block's step scope).
"""
import contextlib
import functools
import logging
import traceback
from typing import Any, Callable, ContextManager, Dict, Iterator, List, Optional, Tuple

import paddle
from paddle.base import core, framework
from paddle.base.framework import Block, Parameter, Variable  # paddle 2.6.2 (also 3.3.1 with PIR off)

from .. import body, frames, patch
from ..core import scope
from ..core.errors import PyLayerContractError
from . import pylayer_op, tape
from .pylayer_op import CALLSTACK_ATTR
from .blocks import blocks_within
from .inline import BACKWARD_ROLE, CLASS_ATTR, ROLE_ATTR

LOG = logging.getLogger("pylayer2static_runtime")


class LegacyAdapter:
    """Per-op glue between `PyLayerOp` and the Program IR's `static_pylayer` (an `adapter.IrAdapter`)."""

    backward_built_with_forward = True
    tapes = tape

    def __init__(self) -> None:
        self._saved: List[Any] = []
        self._declared: List[Tuple[Any, str]] = []
        self._parameters_copied: Dict[str, Any] = {}

    @staticmethod
    def is_tensor(value: Any) -> bool:
        return isinstance(value, Variable)

    @staticmethod
    def fed(value: Any) -> bool:
        return bool(getattr(value, "is_data", False))

    @staticmethod
    def same(a: Any, b: Any) -> bool:
        return a is b

    @staticmethod
    def inplace_map() -> Any:
        """dy2static's record of in-place writes in Program IR programs, by program and
        variable id (paddle 2.6.2 and 3.3.1 `ProgramTranslator._inplace_map`)."""
        from paddle.jit.dy2static.program_translator import ProgramTranslator

        return ProgramTranslator.get_instance()._inplace_map

    @staticmethod
    def collective_group(group: Any) -> Any:
        """None for the whole world in rank order: this IR's static collectives take no group and
        run on the global ring (paddle 2.6.2 "Group can not be used in static graph mode for
        now"); any other group cannot be built."""
        import paddle.distributed as dist

        world = dist.get_world_size()
        if list(group.ranks) == list(range(world)):
            return None
        raise ValueError(
            f"its model-parallel group holds ranks {list(group.ranks)} of {world}; the legacy Program IR's "
            "static collectives (paddle 2.6) take no group and run on the global one (\"Group can not be "
            "used in static graph mode for now\"), so a static graph can only build it when the "
            "model-parallel group is the whole world (mp_degree equal to the number of ranks)"
        )

    @classmethod
    def reduce_scatter(cls, value: Any, group: Any) -> Any:
        """The static form of `dist.stream.reduce_scatter` (paddle 2.6.2 stream/reduce_scatter.py),
        which writes an output made here (read when it is called)."""
        from paddle.distributed.communication import stream

        static_group = cls.collective_group(group)
        shape = list(value.shape)
        if all(dim >= 0 for dim in shape):
            out = paddle.empty([shape[0] // group.nranks, *shape[1:]], dtype=value.dtype)
        else:
            out = paddle.empty_like(paddle.split(value, group.nranks, axis=0)[0])
        stream.reduce_scatter(out, value, group=static_group, sync_op=True)
        return out

    @staticmethod
    def program_records() -> List[Any]:
        """Where dy2static keeps the Program IR's records by `id(program)`: the parameters and
        the in-place writes of each program it builds (paddle 2.6.2 and 3.3.1
        program_translator.py `ProgramTranslator`)."""
        from paddle.jit.dy2static.program_translator import ProgramTranslator

        translator = ProgramTranslator.get_instance()
        return [translator._params_recorder, translator._inplace_map]

    @staticmethod
    def latest(value: Any) -> Any:
        """`value` as the in-place writes followed so far left it: `inplace_map`'s record for
        the program being built."""
        if not isinstance(value, Variable):
            return value
        newer = LegacyAdapter.inplace_map().get(paddle.static.default_main_program(), value.desc.id())
        return value if newer is None else newer

    @staticmethod
    def write_in_place(write: Callable[[], Any], values: List[Any], target: Any) -> Any:
        """`write()`, an in-place API writing `target`, reading the views among `values`
        (`_reading_views`); its result, recorded as `target` after the write when it is a new
        variable (`latest` reads it)."""
        with LegacyAdapter._reading_views(values, target):
            out = write()
        if isinstance(target, Variable) and isinstance(out, Variable) and out is not target:
            LegacyAdapter.inplace_map().add(paddle.static.default_main_program(), target.desc.id(), out)
        return out

    @staticmethod
    def viewed(value: Any) -> bool:
        """Whether `value` is a view or has one: paddle 2.6.2 marks both the input and the
        output of a view op (slice, transpose2, squeeze2, ...) `is_view_var` as it appends it
        under to_static (base/framework.py `record_is_view_var`; a body is built so)."""
        return bool(getattr(value, "is_view_var", False))

    @staticmethod
    @contextlib.contextmanager
    def _reading_views(values: List[Any], target: Any) -> Iterator[None]:
        """While an in-place API writes `target`, the views among `values` it reads are not
        marked as views.

        paddle 2.6.2's in-place API wrapper (utils/inplace_utils.py
        `_inplace_apis_in_dygraph_only_`) refuses every view among its positional arguments,
        read or written ("is a viewed Tensor in dygraph", naming an internal variable): a MoE
        dispatch's `paddle.scatter_(out, index, paddle.gather(x, index, axis=1).T)` stopped
        there, though reading a view gives eager's values. A write into a view is refused
        before, at the user's line (inplace.py `_check_target`).
        """
        with contextlib.ExitStack() as stack:
            for value in values:
                if value is not target and isinstance(value, Variable) and value.is_view_var:
                    stack.enter_context(patch.swapped("legacy.adapter.is_view_var", value, "is_view_var", False))
            yield

    @staticmethod
    def grad_enabled() -> bool:
        """Always: paddle 2.6.2's `is_grad_enabled` reads the dygraph tracer (none in a static
        program), and its static graphs record gradients under `paddle.no_grad` too."""
        return True

    @staticmethod
    def own_gradient(value: Any, gradients: List[Any]) -> bool:
        """Never: `static_pylayer` renames every returned variable (op.py), and a variable
        an op of backward's block writes may still be an incoming gradient written in
        place under its own name."""
        return False

    def op_inputs(self, values: List[Any]) -> List[Any]:
        """The op's inputs: a copy of each variable, used by this op alone.

        `pylayer_grad`'s backward block writes `<input>@GRAD` itself (paddle 2.6.2
        static_pylayer.py renames backward's outputs so), and the Program IR's autodiff
        does not add it up with the variable's other gradients when the variable has other
        consumers under to_static: an output of one PyLayer that is also a model output and
        the input of a second PyLayer gets only one of its two gradients, silently (the
        framework's own dy2static path too). Through a copy, the accumulation happens at the
        `assign`, an ordinary op that autodiff adds up correctly. A variable that stops
        gradient gets no gradient to add up, and goes in as it is; but a parameter (frozen) is
        copied still: `paddle.grad` in a recompute backward looks its name up in the block
        being built (paddle 2.6.2 backward.py `_find_op_path_`), where only the copy is.
        """
        with _call_stacks():
            return self._copied_inputs(values)

    def _copied_inputs(self, values: List[Any]) -> List[Any]:
        copies = []
        for var in values:
            if var.stop_gradient and not isinstance(var, Parameter) and not any(var is seen for seen in copies):
                copies.append(var)
                continue
            copy = self.copy(var)
            copy.stop_gradient = var.stop_gradient
            copies.append(copy)
            if isinstance(var, Parameter):
                self._parameters_copied[copy.name] = var
        return copies

    def save(self, values: List[Any]) -> None:
        """Called at the end of forward: remember the forward-block variables (its values keep
        the marks `forward_grad_mode` gave them as they were made)."""
        self._saved = list(values)

    def restore(self, count: int, after: List[Any]) -> List[Any]:
        """Declare same-named variables in the backward block (one per saved variable), each
        one that is not a parameter read only once the variables `after` exist (`body.read_after`).

        A saved copy of a parameter (see `op_inputs`) is the parameter itself in backward, as
        eager's saved tensors are the tensors themselves: recompute PyLayers save the
        parameters, re-run forward with the layer's own and take `paddle.grad` over the saved
        ones, which a copy has no path to.
        """
        block = paddle.static.default_main_program().current_block()
        values = []
        declared = []  # (index in values, the variable declared)
        for var in self._saved[:count]:
            if var.name in self._parameters_copied:
                values.append(self._parameters_copied[var.name])
                continue
            if not block.has_var(var.name):
                self._declared.append((block, var.name))
            declared.append((len(values), block.create_var(name=var.name, dtype=var.dtype, shape=var.shape, type=var.type)))
            values.append(None)
        for (index, _), value in zip(declared, body.read_after([var for _, var in declared], after)):
            values[index] = value
        return values

    @staticmethod
    def label(outputs: List[Any], cls: type, call: Tuple[Tuple[Any, ...], Dict[str, Any]]) -> None:
        """Name `cls` on the op, for the ops an export's inlining takes out of it (`_inline`);
        the call is not recorded: a loaded legacy export is not trained (`install`)."""
        op = getattr(outputs[0], "op", None) if outputs else None
        if op is not None and op.type == "pylayer":
            op._set_attr(CLASS_ATTR, f"{cls.__module__}.{cls.__qualname__}")

    @staticmethod
    def forward_only_backward(message: str, inputs: List[Any], needs_grad: bool) -> Optional[Callable[..., Any]]:
        """The backward of a PyLayer without one.

        The Program IR builds the backward block with the op, before anyone asks for a
        gradient, so an op whose inputs need one is refused while it is built (eager would
        raise only in backward; raising at run time instead aborts the process under
        to_static). An op whose inputs all stop gradient still gets a backward, of no
        gradients: paddle 2.6.2's autodiff gives every op on the path to a target a grad op
        (to_static of a model that returns such an op's output), and fails on one without.
        """
        if all(var.stop_gradient for var in inputs):
            return lambda *grads: [None] * len(inputs)

        def no_backward(*grads: Any) -> List[Any]:
            raise PyLayerContractError(message)

        return no_backward

    @staticmethod
    @contextlib.contextmanager
    def forward_grad_mode(grad_off: Callable[[], bool]) -> Iterator[Callable[[bool], Any]]:
        """While forward's sub-block is built: the variables an op declares in its block
        stop gradient while `grad_off()`, as eager's under no_grad do; the setter yielded
        sets nothing, as paddle 2.6.2's grad mode is the dygraph tracer's (none in a static
        program).

        The Program IR has no grad mode: paddle 2.6.2 `Block.append_op` (base/framework.py)
        stops an output's gradient only when every input stops it (`pass_stop_gradient`), so
        `hidden_states.reshape(...)` in a forward read `stop_gradient=False` where eager reads
        True. Only variables declared in the op's own block are marked: forward's arguments
        (declared in the op's parent block) keep theirs, as eager's do.
        """
        append = Block.append_op

        def append_op(self: Any, *args: Any, **kwargs: Any) -> Any:
            op = append(self, *args, **kwargs)
            if grad_off() and op is not None:
                for name in op.output_arg_names:
                    var = self.vars.get(name)
                    if var is not None and not isinstance(var, Parameter):
                        var.stop_gradient = True
            return op

        with patch.swapped("legacy.adapter.Block.append_op", Block, "append_op", append_op):
            yield lambda mode: None

    @staticmethod
    @contextlib.contextmanager
    def body_semantics(method: str, rewrite: Callable[[List[str]], Optional[List[str]]]) -> Iterator[None]:
        """While forward's or backward's sub-block is built (alike for both `method`s):
        `x.clone()`, `x.detach()`, `x.T` and `x.size` append their op to the block being
        built; once it is built, its ops' call stacks rewritten (`rewrite_callstacks`).

        paddle 2.6.2 `Variable.clone`, `detach`, `T` and `size` append to `x.block`, the
        block that declares `x` (base/framework.py). An in-place write in a sub-block
        (`g[mask] = 0`) declares its result in the global block (variable_index.py
        `_create_global_variable_for_type_inference`), so `g.clone()` after it put the copy
        in the global block, before the write and the gradient it reads exist: the
        straight-through quantizer's `return g.clone()` failed at run time ("Tensor holds
        no memory"), or read zeros. A parameter is declared in the global block, so
        `lora_A.T` in a backward (PaddleNLP's QuickLora) put its transpose there, after the
        op, where to_static's forward program prunes it: "Tensor holds no memory" too.
        """
        clone, detach, transposed, size = _block_being_built_methods()
        with patch.swapped("legacy.adapter.Variable.clone", Variable, "clone", clone), \
                patch.swapped("legacy.adapter.Variable.detach", Variable, "detach", detach), \
                patch.swapped("legacy.adapter.Variable.T", Variable, "T", property(transposed)), \
                patch.swapped("legacy.adapter.Variable.size", Variable, "size", size):
            yield
        LegacyAdapter.rewrite_callstacks(rewrite)

    @staticmethod
    @contextlib.contextmanager
    def _op_semantics() -> Iterator[None]:
        """While the op is appended: a sync of the program with its C++ description syncs
        the blocks made since (the op's sub-blocks, and theirs), and so does a sync of one
        block: one made before is left as it is.

        The framework's code a body runs syncs the whole program where it changed C++ alone
        (paddle 2.6.2: `paddle.grad` in a recompute backward appends its gradient ops as
        descs, a nested `static_pylayer` renames in its backward block, `Block._remove_var`
        syncs first), a pass over every op built so far, per PyLayer call: building was
        quadratic in the program's size. What such code changes in C++ alone is in the blocks
        made since the op began (the block being built and those inside it); the blocks before
        them only got ops and variables through Python, which holds them already.
        """
        program = paddle.static.default_main_program()
        first_new = program.num_blocks
        sync_block = Block._sync_with_cpp

        def sync_new_blocks() -> None:
            for index in range(len(program.blocks), program.desc.num_blocks()):
                program.blocks.append(Block(program, index))
            for block in program.blocks[first_new:]:
                sync_block(block)

        def sync_block_if_new(block: Any) -> None:
            if block.program is not program or block.idx >= first_new:
                sync_block(block)

        with patch.swapped("legacy.adapter.Program._sync_with_cpp", program, "_sync_with_cpp", sync_new_blocks), \
                patch.swapped("legacy.adapter.Block._sync_with_cpp", Block, "_sync_with_cpp", sync_block_if_new):
            yield

    def append_pylayer(self, forward: Callable[..., List[Any]], inputs: List[Any], backward: Any) -> List[Any]:
        """The op as `static_pylayer` builds it, its copies bare ops (`pylayer_op.py`), under
        `_op_semantics`; then what building it left cleaned up (`_finish`). Its outputs."""
        with _call_stacks(), self._op_semantics():
            result = pylayer_op.append_pylayer(forward, inputs, backward)
        self._finish()
        return list(result) if result is not None else []

    @staticmethod
    def copy(value: Any) -> Any:
        return pylayer_op.copy(paddle.static.default_main_program().current_block(), value)

    @staticmethod
    def op_mark() -> Any:
        """The block being built, its op count and its variables' names."""
        block = paddle.static.default_main_program().current_block()
        return block, len(block.ops), set(block.vars)

    @staticmethod
    def take_back_ops(mark: Any) -> None:
        """Remove the ops after `mark` from its block, the last first, and the variables made
        since (`written.py` refuses a new block while a body runs as written)."""
        block, count, names = mark
        for index in reversed(range(count, len(block.ops))):
            block._remove_op(index, sync=False)
        for name in [name for name in block.vars if name not in names]:
            block._remove_var(name, sync=False)
        block._sync_with_cpp()

    @staticmethod
    def rewrite_callstacks(rewrite: Callable[[List[str]], Optional[List[str]]]) -> None:
        """Rewrite the `op_callstack` attribute (paddle 2.6.2 framework.py `Operator` fills it;
        the executor prints it when the op fails, op_call_stack.cc; inlining copies the op's
        desc with it, `inline.py`)."""
        program = paddle.static.default_main_program()
        block = program.current_block()
        for current in [block, *blocks_within(program, block.ops)]:
            for op in current.ops:
                if op.has_attr(CALLSTACK_ATTR):
                    rewritten = rewrite(op.attr(CALLSTACK_ATTR))
                    if rewritten is not None:
                        op._set_attr(CALLSTACK_ATTR, rewritten)

    @staticmethod
    def foreign_value(values: List[Any]) -> Optional[Any]:
        """None: the Program IR builds backward with forward, in the same program."""
        return None

    def _finish(self) -> None:
        """Remove the backward block's stand-ins, as the framework does for its own context;
        then let the inputs backward returned None for stop gradient (`_no_gradient_stops`),
        and give the ops of backward's inner blocks backward's role (`_backward_role_within`)."""
        for block, name in self._declared:
            if block.has_var(name):
                block._remove_var(name)
        for block in {id(block): block for block, _ in self._declared}.values():
            block._sync_with_cpp()  # those blocks alone: a whole program's sync per call was quadratic
        self._declared = []
        block = paddle.static.default_main_program().current_block()
        op = block.ops[-1] if block.ops else None
        ids = op._blocks_attr_ids("blocks") if op is not None and op.type == "pylayer" else []
        if len(ids) > 1:
            backward = block.program.block(ids[1])
            _no_gradient_stops(op, backward)
            _backward_role_within(backward)


def _call_stacks() -> ContextManager[Any]:
    """While the op's operators are made (its input copies, the op with its sub-blocks): each
    new operator's creation stack is the user's, made once per stack (`_CallStacks`)."""
    return patch.swapped("legacy.adapter.framework.traceback", framework, "traceback", _CallStacks())


_STACKS_KEPT = 4096
_stacks: Dict[Tuple[Any, ...], List[Tuple[str, int, str, str]]] = {}
"""The stacks `_CallStacks` gave, by the body being built and each frame's code and line:
the ops of each call of a class from one line of a model (a loop over its blocks) share
theirs. A cache, cleared when it holds `_STACKS_KEPT`."""


class _CallStacks:
    """`traceback` as the Program IR's `Operator` reads it while an op is built.

    paddle 2.6.2 `Operator.__init__` (base/framework.py; 3.3.1 with PIR off alike) records a
    new operator's creation stack in its `op_callstack` attribute with
    `traceback.extract_stack()`, which makes an object per frame and checks every file's
    modification time (an `os.stat` per frame per operator), and formats each frame into two
    strings. A body's operators repeat the frames above them, deep in dy2static's and the
    runtime's calls, which the body's rewrite to the user's lines then drops again
    (`frames.user_frames`): those stacks were over a third of building a chain of small
    PyLayers. Here an operator built in a body gets the stack as the user wrote the code
    already, made once per stack (`_stacks`; the rewrite after the body leaves it as it is);
    the rest of `traceback` is the module's own.
    """

    @staticmethod
    def extract_stack() -> List[Tuple[str, int, str, str]]:
        """The caller's stack, outermost frame first, as `traceback.extract_stack()` gives it
        (path, line, function, source line), in a body as the user wrote it."""
        frames_up = frames.caller_frames(1)
        body = scope.current().body
        key = (body and body.cls, body and body.method, *[(frame.f_code, frame.f_lineno) for frame in frames_up])
        stack = _stacks.get(key)
        if stack is None:
            entries = frames.stack_entries(frames_up)
            rewritten = None if body is None else frames.user_frames(entries, body.cls, body.method)
            stack = entries if rewritten is None else rewritten
            if len(_stacks) >= _STACKS_KEPT:
                _stacks.clear()
            _stacks[key] = stack
        return stack

    def __getattr__(self, name: str) -> Any:
        return getattr(traceback, name)


@functools.lru_cache(maxsize=None)
def _block_being_built_methods() -> Tuple[Callable[[Any], Any], ...]:
    """`Variable.clone`, `detach`, `T` and `size` appending to the block being built
    (`LegacyAdapter.body_semantics`); made once, as a body is built per PyLayer call."""
    def in_block_being_built(original: Callable[[Any], Any], elsewhere: Callable[[Any], Any]) -> Any:
        @paddle.jit.not_to_static  # called from converted code: as it is, not converted
        def method(self: Any) -> Any:
            if self.block.idx == self.block.program.current_block_idx:
                return original(self)
            return elsewhere(self)

        return method

    def detached_copy(var: Any) -> Any:
        copy = paddle.assign(var)
        copy.stop_gradient = True
        return copy

    return (in_block_being_built(Variable.clone, paddle.assign), in_block_being_built(Variable.detach, detached_copy),
            in_block_being_built(Variable.T.fget, lambda var: paddle.transpose(var, list(reversed(range(len(var.shape)))))),
            in_block_being_built(Variable.size, paddle.numel))


def _backward_role_within(backward: Any) -> None:
    """The ops of the blocks inside the op's backward block (control flow, a recompute's
    nested pylayer op) get backward's role, as backward's own ops do (static_pylayer.py
    `complete_backward_block` marks those only).

    An eval program is a clone for test (paddle 2.6.2 prune.cc `PruneBackward`), which drops
    every block left without ops once the backward-role ones are gone; a block still holding
    ops whose parent was dropped fails the clone ("The origin parent block id is not found in
    pruned_progin_block_id_map"): to_static in eval mode of a PyLayer whose backward holds an
    `if` failed so, as the framework's own path does.
    """
    for child in blocks_within(backward.program, backward.ops):
        for op in child.ops:
            op._set_attr(ROLE_ATTR, BACKWARD_ROLE)


def _no_gradient_stops(op: Any, backward: Any) -> None:
    """The op's inputs that backward returned None for stop gradient, so they get none.

    `pylayer_grad` declares a gradient output for every input (paddle 2.6.2 pylayer_op.cc
    `PyLayerGradMaker`); backward's block writes only those it returned, renamed to
    `<input>@GRAD` (static_pylayer.py `complete_backward_block`). Autodiff then treats the
    others as written: the `assign` into the op (`op_inputs`) passes on a zero gradient, and a
    parameter gets `.grad` zeros where eager leaves None, which momentum and weight decay
    then move. An input that stops gradient is left out by autodiff (`_get_stop_gradients_`,
    backward.py): no grad op output, no `assign` gradient, and `.grad` stays None unless
    another path gives one. Every such input is this op's own copy (`op_inputs`), or
    stopped gradient already.
    """
    for name in op.input("Input"):
        if not backward.has_var(name + core.grad_var_suffix()):
            op.block._var_recursive(name).stop_gradient = True
