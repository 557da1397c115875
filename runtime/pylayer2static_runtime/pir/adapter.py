"""Adapter for the PIR (paddle 3.x, `paddle.pir.Value` tensors).

Read from paddle 3.3.1: python/paddle/static/nn/static_pylayer.py (`static_pylayer`
PIR branch: `build_pylayer_op`, outputs flattened and a single output unwrapped,
backward registered as a callable that PIR turns into a block at autodiff time)
and python/paddle/jit/dy2static/py_layer.py (`StaticPyLayerContext`: saved tensors
cross with `build_pipe_for_pylayer` in the forward block and are read back from the
`cf.tuple_pop` op of the backward block).
"""
import contextlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import paddle
from paddle.base.libpaddle.pir import build_pipe_for_pylayer  # paddle 3.3.1
from paddle.static.nn import static_pylayer

from .. import body, framework, patch
from ..core import records
from ..core.errors import PyLayerContractError
from . import tape
from .ops import CLASS_ATTR, PYLAYER, is_in_place

CALLSTACK_ATTR = "op_callstack"  # paddle 3.3.1 `core.op_proto_and_checker_maker.kOpCreationCallstackAttrName()`


class PirAdapter:
    """Per-op glue between `PyLayerOp` and PIR's `static_pylayer` (an `adapter.IrAdapter`)."""

    backward_built_with_forward = False
    tapes = tape  # forward's bodies replayed for calls alike (`replay.py`); backward is run

    @staticmethod
    def is_tensor(value: Any) -> bool:
        return isinstance(value, paddle.pir.Value)

    @staticmethod
    def fed(value: Any) -> bool:
        producer = value.get_defining_op()
        return producer is not None and producer.name() == "pd_op.data"

    @staticmethod
    def viewed(value: Any) -> bool:
        """Whether `value` is a view or has one, as paddle 3.3.1's in-place API wrapper asks
        of the value it writes under to_static (utils/inplace_utils.py `check_view_value`:
        made by a stride op, or the input of one); a value no op made (a block argument) is
        neither."""
        from paddle.utils.inplace_utils import check_view_value

        return value.get_defining_op() is not None and check_view_value(value)

    @staticmethod
    def grad_enabled() -> bool:
        """Whether the op is built where gradients are recorded (not under `paddle.no_grad`)."""
        return paddle.is_grad_enabled()

    @staticmethod
    def same(a: Any, b: Any) -> bool:
        """Whether two values are one (`==` on values builds an op)."""
        return a.is_same(b)

    @staticmethod
    def inplace_map() -> Any:
        """dy2static's record of in-place writes in PIR programs, by program and value (paddle
        3.3.1 `parameter_recorder._global_inplace_map`; 2.6.2 to 3.2.2 keep it in
        jit/pir_dy2static, `framework.parameter_recorder`). Never emptied for a program
        dy2static did not build (`body.converted_code_semantics` restores it)."""
        return framework.parameter_recorder()._global_inplace_map

    @staticmethod
    def collective_group(group: Any) -> Any:
        """The group itself: `collectives.py` builds a static collective on its ring."""
        return group

    @staticmethod
    def reduce_scatter(value: Any, group: Any) -> Any:
        """PIR's op on the group's ring (paddle 3.3.1's `dist.stream.reduce_scatter` builds the
        legacy op with `LayerHelper` even in a PIR program: TypeError)."""
        return paddle._C_ops.reduce_scatter(value, group.id, group.nranks)

    @staticmethod
    def program_records() -> List[Any]:
        """Where dy2static keeps PIR's records by `id(program)`: the parameters and the
        in-place writes of each program it builds (`framework.parameter_recorder`)."""
        recorder = framework.parameter_recorder()
        return [recorder._global_parameter_recorder, recorder._global_inplace_map]

    @staticmethod
    def latest(value: Any) -> Any:
        """`value` as the in-place writes followed so far left it: `inplace_map`'s record for
        the program being built."""
        if not isinstance(value, paddle.pir.Value):
            return value
        newer = PirAdapter.inplace_map().get(paddle.static.default_main_program(), value)
        return value if newer is None else newer

    @staticmethod
    def write_in_place(write: Callable[[], Any], values: List[Any], target: Any) -> Any:
        """`write()`, an in-place API writing `target`; its result, recorded as `target` after
        the write when it is a new value (`latest` reads it). The API reads the views among
        `values` as they are: paddle 3.3.1's wrapper asks only of the value written (`viewed`)."""
        out = write()
        if isinstance(target, paddle.pir.Value) and isinstance(out, paddle.pir.Value) and out is not target:
            PirAdapter.inplace_map().add(paddle.static.default_main_program(), target, out)
        return out

    @staticmethod
    def own_gradient(value: Any, gradients: List[Any]) -> bool:
        """Whether backward may return `value` as it is: an op of backward's block made it
        (not an incoming gradient, a saved tensor's pop, a parameter), not in place (an
        in-place op's result shares its input's memory), and it is returned once."""
        op = value.get_defining_op()
        block = paddle.pir.get_current_insertion_point().block()
        return (
            op is not None
            and op.get_parent_block() == block
            and op.name() != "cf.tuple_pop"
            and not is_in_place(op)
            and sum(g is not None and g.is_same(value) for g in gradients) == 1
        )

    @staticmethod
    def op_mark() -> Any:
        """The block being built and its op count (ops are appended at its end: pir/tape.py)."""
        block = paddle.pir.get_current_insertion_point().block()
        return block, len(block.ops)

    @staticmethod
    def take_back_ops(mark: Any) -> None:
        """Remove the ops after `mark` from its block, the last first (each one's results are
        used by later ones only; an op's blocks go with it)."""
        block, count = mark
        for op in reversed(block.ops[count:]):
            block.remove_op(op)

    @staticmethod
    def op_inputs(values: List[Any]) -> List[Any]:
        """The op's inputs: the values themselves, but a copy for each repeat of one.

        Eager gives each argument its own gradient slot, also one tensor passed twice
        (`Gate.apply(h, h)`), and adds up what backward returns for them. PIR's pylayer op
        takes one value once (paddle 3.3.1 autodiff fails with "Expected ret_num == 1",
        the framework's own to_static too); through a copy, the `assign` adds up the two.
        """
        inputs: List[Any] = []
        for value in values:
            if any(value.is_same(seen) for seen in inputs):
                copy = paddle.assign(value)
                copy.stop_gradient = value.stop_gradient
                value = copy
            inputs.append(value)
        return inputs

    def __init__(self, inside_backward: bool = False) -> None:
        self.inside_backward = inside_backward
        self._carried_parameters: List[Optional[str]] = []

    def save(self, values: List[Any]) -> None:
        """Called at the end of forward, inside the forward block: its values stop gradient as
        the framework's later passes expect (`_unmark_forward`), and `values` are carried.

        Parameters are not piped: backward reads the program's parameter itself, as eager's
        saved tensors are the tensors themselves. A piped copy is a new value, so
        `paddle.grad` over it in backward (recompute PyLayers save the parameters and re-run
        forward with the layer's own) would find no path and give no gradient.
        """
        _unmark_forward()
        self._carried_parameters = [_parameter_name(value) for value in values]
        piped = [value for value, name in zip(values, self._carried_parameters) if name is None]
        if piped:
            block = paddle.pir.get_current_insertion_point().block()
            build_pipe_for_pylayer(block, piped)
            if self.inside_backward:
                self._pipe_into(block.parent_block)

    @staticmethod
    def _pipe_into(home: Any) -> None:
        """Move the pipe just built from the program's first op to the start of `home`.

        `build_pipe_for_pylayer` creates its stack at the start of the program (paddle 3.3.1
        control_flow_api.cc `BuildPipeForPyLayer`). For an op built inside a backward (a
        PyLayer applied under `paddle.enable_grad()` there) that is the forward part of a
        to_static program, whose split then looks for the stack among the values passed to
        the backward part and fails at run time ("The variable middle_0 should exist").
        """
        stack = home.program.global_block().front()
        if stack.name() == "cf.stack_create" and home.num_ops():
            stack.move_before(home.front())

    def restore(self, count: int, after: List[Any]) -> List[Any]:
        """Called at the start of backward: the backward block's view of the saved values,
        each one forward piped read only once the values `after` exist (`body.read_after`)."""
        names = self._carried_parameters[:count]
        piped = sum(name is None for name in names)
        popped: List[Any] = []
        if piped:
            block = paddle.pir.get_current_insertion_point().block()
            for op in block.ops:
                if op.name() == "cf.tuple_pop":
                    popped = list(op.as_tuple_pop_op().pop_all_values())
        if len(popped) != piped or len(names) != count:
            raise RuntimeError(
                f"pylayer2static: expected {piped} saved values in the backward block, found {len(popped)}"
            )
        it = iter(body.read_after(popped, after))
        restored = [next(it) if name is None else _program_parameter(name) for name in names]
        missing = [name for name, value in zip(names, restored) if value is None]
        if missing:
            raise RuntimeError(f"pylayer2static: saved parameters {missing} are not in the backward program")
        return restored

    @staticmethod
    def label(outputs: List[Any], cls: type, call: Tuple[Tuple[Any, ...], Dict[str, Any]]) -> None:
        """Name `cls` on the op, for the ops inlining takes out of it (`ops.py`), and
        record forward's arguments `call`, for an export's training after jit.load (`core/records.py`)."""
        op = outputs[0].get_defining_op() if outputs else None
        if op is not None and op.name() == PYLAYER:
            op.set_str_attr(CLASS_ATTR, f"{cls.__module__}.{cls.__qualname__}")
            records.record_call(op, cls, call, PirAdapter.is_tensor)

    @staticmethod
    def forward_only_backward(message: str, inputs: List[Any], needs_grad: bool) -> Optional[Callable[..., Any]]:
        """The backward of a PyLayer without one: PIR calls it only when autodiff asks for
        a gradient through the op, and then it raises `message`, as eager raises in backward."""
        if all(value.stop_gradient for value in inputs):
            return None  # `static_pylayer` accepts no backward only for such inputs
        if not needs_grad:
            # Applied under paddle.no_grad(): the outputs stop gradient, so no gradient flows
            # through the op. paddle 3.2+ autodiff then leaves the op alone; 3.0.0 and 3.1.1
            # (python/paddle/autograd/ir_backward.py) still call its backward, which gives
            # none, as eager does.
            def no_gradient(*grads: Any) -> List[Any]:
                return [None] * len(inputs)

            return no_gradient

        def no_backward(*grads: Any) -> List[Any]:
            raise PyLayerContractError(message)

        return no_backward

    @staticmethod
    @contextlib.contextmanager
    def forward_grad_mode(grad_off: Callable[[], bool]) -> Iterator[Callable[[bool], Any]]:
        """While forward's sub-block is built: the framework's own grad mode off, and set as
        forward sets its mode (the setter yielded); PIR builds ops by it (paddle 3.3.1
        paddle/base/dygraph/base.py `is_grad_enabled` reads `core._has_grad`): an op built
        with it off makes values that stop gradient, so `grad_off` is not needed here."""
        from paddle.base import core

        outer = core._has_grad()
        core._set_has_grad(False)
        try:
            yield core._set_has_grad
        finally:
            core._set_has_grad(outer)

    @staticmethod
    @contextlib.contextmanager
    def body_semantics(method: str, rewrite: Callable[[List[str]], Optional[List[str]]]) -> Iterator[None]:
        """While forward's or backward's sub-block is built (ops go where the insertion point
        is): in backward, `_backward_semantics`; once it is built, its ops' call stacks
        rewritten (`_rewrite_callstacks`)."""
        with contextlib.ExitStack() as stack:
            if method == "backward":
                stack.enter_context(_backward_semantics())
            yield
        _rewrite_callstacks(rewrite)

    @staticmethod
    def append_pylayer(forward: Callable[..., List[Any]], inputs: List[Any], backward: Any) -> List[Any]:
        """The framework's own op (paddle 3.3.1 python/paddle/static/nn/static_pylayer.py):
        backward is given to it, to be built when autodiff asks (`backward_built_with_forward`);
        its outputs as a list (`static_pylayer` unwraps a single output)."""
        result = static_pylayer(forward, inputs, backward)
        if isinstance(result, paddle.pir.Value):
            return [result]
        return list(result) if result is not None else []

    @staticmethod
    def copy(value: Any) -> Any:
        return paddle.assign(value)

    @staticmethod
    def foreign_value(values: List[Any]) -> Optional[Any]:
        """A value backward's block reads, or returns, from another program, else None.

        Under to_static, PIR builds backward at autodiff time, on a clone of the traced
        program (pir_partial_program.py `_create_program`); a tensor backward reaches other
        than through its arguments or ctx (captured by a closure, kept on an object) is still
        the traced program's, and running it fails or crashes (paddle 3.3.1: "Not found key
        in IRMapping", then SIGABRT).
        """
        block = paddle.pir.get_current_insertion_point().block()
        program = block.program
        pending = [block]
        while pending:
            current = pending.pop()
            for op in current.ops:
                pending.extend(op.blocks())
                for operand in op.operands_source():
                    if _defined_elsewhere(operand, program):
                        return operand
        return next((v for v in values if v is not None and _defined_elsewhere(v, program)), None)


@contextlib.contextmanager
def _backward_semantics() -> Iterator[None]:
    """While backward's sub-block is built: `detach()` makes a copy, and a layer's
    parameter read as an eager tensor is the program's own parameter.

    In paddle 3.3.1 PIR, `y = x.detach(); y.stop_gradient = False; paddle.grad(f(y), y)`
    drops every path through `y` but the last (`share_data_`, the op `detach` builds, is
    an in-place op to autodiff; with `f(y) = tanh(y) * y` only `tanh(y) * dy` comes out),
    also at the top of a to_static program, silently. That is how recompute PyLayers
    (re-run forward in backward, `paddle.grad` of it) are written, so their gradients
    would be wrong. A copy that stops gradient has the same values and none of that.

    Under to_static, backward is built at autodiff time, on a clone of the traced program
    and after dy2static stopped recording parameters (pir_partial_program.py
    `_append_backward`; parameter_recorder.py `pop`): a parameter converted then (the
    re-run forward of a recompute PyLayer) would be a new, unfed parameter op appended to
    the program, so the gradient would not reach the layer's parameter.
    """
    @paddle.jit.not_to_static
    def detached_copy(value: Any) -> Any:
        copy = paddle.assign(value)
        copy.stop_gradient = True
        return copy

    with patch.swapped("pir.adapter.Value.detach", paddle.pir.Value, "detach", detached_copy), _traced_parameters():
        yield


def _unmark_forward() -> None:
    """After forward's body is built (its code read `stop_gradient` as eager), its values
    stop gradient as the framework builds them with grad mode on: a value stops gradient
    when every operand does. The program's later passes read these flags (paddle 3.3.1
    pir_partial_program.py splits forward from backward by them: a loaded export's
    training then read a saved value backward did not get)."""
    block = paddle.pir.get_current_insertion_point().block()
    for op in block.ops:
        operands = op.operands_source()
        if op.name() in ("cf.yield", "cf.tuple_push", PYLAYER) or not operands:
            continue
        stop = all(v.stop_gradient for v in operands if v is not None and v.initialized())
        for value in op.results():
            value.stop_gradient = stop


def _rewrite_callstacks(rewrite: Callable[[List[str]], Optional[List[str]]]) -> None:
    """Rewrite `Operation.callstack` (paddle 3.3.1: the `op_callstack` attribute, which
    the interpreter prints when the op fails, pir_interpreter.cc; inlining moves the op
    itself, `ops.py`, so it keeps it)."""
    pending = [paddle.pir.get_current_insertion_point().block()]
    while pending:
        block = pending.pop()
        for op in block.ops:
            pending.extend(op.blocks())
            if op.has_attr(CALLSTACK_ATTR):
                rewritten = rewrite(op.callstack)
                if rewritten is not None:
                    op.callstack = rewritten


def _defined_elsewhere(value: Any, program: Any) -> bool:
    op = value.get_defining_op() if value.initialized() else None
    return op is not None and op.get_parent_block().program is not program


def _parameter_name(value: Any) -> Optional[str]:
    """The name of the program parameter `value` is, else None."""
    op = value.get_defining_op()
    return value.name if op is not None and op.name() == "builtin.parameter" else None


def _program_parameter(name: str) -> Optional[Any]:
    """The parameter `name` of the program being built, or None. Looked up by the program
    itself: a walk over its global block per backward built made building quadratic in
    program size."""
    value = paddle.static.default_main_program().get_parameter_value_by_name(name)
    return value if value.initialized() else None


@contextlib.contextmanager
def _traced_parameters() -> Iterator[None]:
    """An eager parameter converted outside dy2static's tracing reads the program's own
    parameter of its name (one the traced forward read); any other is an error."""
    from paddle.jit.dy2static.program_translator import _program_hash

    recorder = framework.parameter_recorder()._global_parameter_recorder

    record = recorder.get

    def get(program: Any, tensor: Any) -> Any:
        if _program_hash(program) in recorder.params_dict:
            return record(program, tensor)
        parameter = _program_parameter(tensor.name)
        if parameter is None:
            raise PyLayerContractError(
                f"backward reads '{tensor.name}', a tensor of the layer that the traced forward "
                "program does not read; under to_static backward can use only the parameters "
                "and buffers forward uses (save it with ctx.save_for_backward)"
            )
        return parameter

    with patch.swapped("pir.adapter.parameter_recorder.get", recorder, "get", get):
        yield
