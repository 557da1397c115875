"""`PyLayerOp`: one PyLayer call built as one `pylayer` op in a static graph.

The op follows eager `PyLayer.apply` (paddle 3.3.1 and 2.6.2
paddle/fluid/pybind/eager_py_layer.cc `pylayer_method_apply`, and
paddle/fluid/eager/pylayer/py_layer_node.cc `GradNodePyLayer::operator()`):

- forward gets the call as its builder bound it (forward's own parameters, `DEFAULT`
  resolved), equivalent to eager's `forward(ctx, *args, **kwargs)`;
- gradient slots of the inputs and outputs are eager's (`layout.py`): one per argument in
  the order the call was written, one per item of forward's result; backward gets one
  gradient per output slot (a list for a list/tuple slot);
- backward returns a tuple (one item per input slot) or a single value (the first);
  it may return fewer items than there are input slots when every slot it leaves out
  stops gradient; a slot that stops gradient must get None.

Backward is built as eager runs it: grad mode off unless it turns it on (a PyLayer applied
under `paddle.enable_grad()` there is an op of its own, with its own backward), saved
tensors keep their stop_gradient, and saved parameters are the parameters themselves.

Tensors deeper in the structures are op inputs and outputs too (so the sub-blocks
can use them) but, as in eager, no gradient flows through them. Whatever breaks these
rules raises `PyLayerContractError` while the graph is built, naming the class and
where its forward/backward is defined; nothing is silently dropped or broadcast.

`PyLayerOp` holds the call (`layout.CallLayout`); `build` is a `_Build`, steps over typed
records (`_Inputs`, `_Outputs`), each IR's part behind `adapter.IrAdapter`. Each body (the
whole call, forward, backward) comes from the call's `replay.Source`: a call alike's recording
replayed, or the body run and then kept for the calls alike to come (`replay.py`).
"""
import functools
import inspect
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from . import body, context, inplace, replay, sot, written
from .adapter import IrAdapter, adapter_for_program
from .convert import static_function
from .core import purity, regrad, scope, structure
from .core.errors import contract_error
from .frames import reraise_with_user_lines
from .core.layout import CallLayout, Flat, Slot, flat_slots, last_places, result_items, shapes_conflict, slot_gradients


def _is_in(value: Any, values: List[Any]) -> bool:
    return any(value is v for v in values)


class _Inputs(NamedTuple):
    """The call's side of the op: the passed arguments flattened, and the op's inputs."""

    flat: Flat  # the arguments as written, flattened, with their gradient slots
    values: List[Any]  # the op's inputs (the adapter's, one per tensor of `flat`)


class _Outputs(NamedTuple):
    """What forward returned, recorded while its sub-block is built."""

    out: Any  # forward's result, as returned
    flat: Flat  # its leaves, output slots and tensors (the op's outputs, inner side)
    carried_stop_gradient: List[bool]  # of the tensors ctx carries to backward


class PyLayerOp:
    """One `cls.apply(*args, **kwargs)` call, to be built as a `pylayer` op.

    `args`/`kwargs`: the call as the class's builder bound it (arguments `apply` marked
    with their place in the call as written, `DEFAULT` for a parameter left out), or, used
    directly, the call as written.
    """

    def __init__(self, cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
        self.cls = cls
        self.layout = CallLayout(cls, tuple(args), dict(kwargs))
        self.args, self.kwargs = self.layout.forward_call(self.layout.arguments)

    def build(self, forward: Callable[..., Any], backward: Callable[..., Any]) -> Any:
        """Append the op to the program being built; return forward's outputs."""
        written.check_nested_build()
        current = scope.current()
        adapter = adapter_for_program(inside_backward=current.backward_depth > 0)
        if current.sot_recording:
            sot.check_repeatable(self.cls, self._python_objects(adapter.is_tensor))
        ctx = context.StaticContext(adapter.is_tensor)
        if current.backward_depth and not current.backward_mode:
            # Inside a backward with grad mode off, eager runs a PyLayer's forward
            # without recording a gradient: no op, no backward, just forward's values.
            return static_function(forward, "forward")(ctx, *self.args, **self.kwargs)
        return _Build(self, adapter, ctx, forward, backward).op()

    def _python_objects(self, is_tensor: Callable[[Any], bool]) -> Tuple[str, ...]:
        """forward's parameters bound to a Python object of the caller's (not a tensor, not an
        immutable value), whose attributes and items forward may write (`core/writes.py`)."""
        signature = _signature(self.cls.forward)
        if signature is None:
            return ()
        try:
            bound = signature.bind(None, *self.args, **self.kwargs).arguments
        except TypeError:
            return ()
        return tuple(name for name, value in bound.items()
                     if not is_tensor(value) and not body.is_eager_tensor(value) and not purity.immutable(value))


@functools.lru_cache(maxsize=None)
def _signature(fn: Callable[..., Any]) -> Optional[inspect.Signature]:
    """`fn`'s signature, read once per function (a backward is built once per call), or None."""
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


class _Build:
    """One `PyLayerOp.build`: the inputs, forward's and backward's sub-blocks, the outputs."""

    def __init__(
        self, op: PyLayerOp, adapter: IrAdapter, ctx: context.StaticContext,
        forward: Callable[..., Any], backward: Callable[..., Any],
    ) -> None:
        self.cls = op.cls
        self.layout = op.layout
        self.adapter = adapter
        self.ctx = ctx
        self.state = context.state_of(ctx)
        self.written_forward = forward
        self.forward = static_function(forward, "forward")
        self.forward_only = not body.defines_backward(backward)
        self.backward = backward
        # converted now, as forward is: a backward dy2static cannot convert fails the build here
        self.static_backward = backward if self.forward_only else static_function(backward, "backward")
        self.arguments = [structure.map_leaves(body.as_static, a) for a in self.layout.arguments]
        flat = flat_slots(self.arguments, adapter.is_tensor)
        self.inputs = _Inputs(flat, adapter.op_inputs(flat.tensors()))
        self.outputs: Optional[_Outputs] = None
        self.needs_grad = False  # set by `op` before forward is built (and by it: `_flipped_inputs`)
        self.grad_enabled = False  # set by `op`
        self.bodies = replay.NOT_REPLAYED  # set by `op`: where the bodies come from (`replay.Source`)
        self.forward_body = replay.NOT_REPLAYED.forward()  # set by `op`: forward's (`replay.Body`)

    def op(self) -> Any:
        """Build the op; forward's result, its tensors the op's outputs."""
        # Inside a forward, the mode is forward's (off unless it turns it on), as in eager.
        forward_mode = scope.current().forward_mode
        grad_enabled = self.adapter.grad_enabled() if forward_mode is None else forward_mode
        self.grad_enabled = grad_enabled
        needs_grad = grad_enabled and any(
            not self.inputs.values[i].stop_gradient for slot in self.inputs.flat.slots for i in slot.tensors
        )
        self.needs_grad = needs_grad
        if not self.forward_only:
            self.bodies = replay.source(
                self.cls, [self.written_forward, self.backward], self.layout.forward_call(self.arguments),
                self.layout.labels, needs_grad, self.adapter)
        whole = self.bodies.call()
        if whole.recorded:
            return self._replayed_call(whole, needs_grad)
        self.forward_body = self.bodies.forward()
        if self.forward_only:
            backward = self.adapter.forward_only_backward(self._no_backward_message(), self.inputs.values, needs_grad)
        else:
            backward = self.backward_block
        with whole.built(self._call_inputs()):
            try:
                outs = self.adapter.append_pylayer(self.forward_block, self.inputs.values, backward)
            except Exception as exc:  # noqa: BLE001 - re-raised, with the user's lines
                reraise_with_user_lines(exc)
            self.adapter.label(outs, self.cls, self.layout.written_call(self.arguments))
        # A ctx that marked tensors decides its outputs' stop_gradient (`_returned`), which a
        # replay, running no forward, would not know.
        if context.recorded(self.ctx) is not None:
            outputs = self._forward_result()
            whole.keep(outputs.out, outs, outputs.carried_stop_gradient)
        return self._returned(outs, self.needs_grad)

    def _replayed_call(self, whole: replay.Body, needs_grad: bool) -> Any:
        """The whole op as the recording's, on the op's inputs; forward's result."""
        out, outs, carried_stop_gradient = whole.replayed(self._call_inputs())
        self.outputs = _Outputs(out, flat_slots(result_items(out), self.adapter.is_tensor), carried_stop_gradient)
        return self._returned(outs, needs_grad)

    def _forward_result(self) -> _Outputs:
        if self.outputs is None:
            raise contract_error(self.cls, "forward was not run while building the op")
        return self.outputs

    def forward_block(self, *tensors: Any) -> List[Any]:
        """forward's sub-block: forward run on the op's inputs; the tensors it returns."""
        if self.forward_body.recorded:
            return self._replayed_forward(list(tensors))
        arguments = structure.pack_as(self.layout.arguments, self.inputs.flat.with_tensors(list(tensors)))
        args, kwargs = self.layout.forward_call(list(arguments))
        stopped = [value.stop_gradient for value in tensors]

        def build(forward: Callable[..., Any]) -> Tuple[Any, List[Any]]:
            with self.forward_body.built(list(tensors)), body.converted_code_semantics(self.adapter), \
                    body.body_rules(self.cls, "forward", self.adapter, list(tensors)), body.eager_forward_grad_mode(self.adapter):
                result = structure.map_leaves(inplace.latest, forward(self.ctx, *args, **kwargs))
                return result, [inplace.latest(value) for value in context.carried_leaves(self.state)]

        out, carried = written.run(self.forward, build, self.adapter, self._rewinding(list(tensors), stopped))
        self._flipped_inputs([i for i, value in enumerate(tensors) if stopped[i] and not value.stop_gradient])
        flat = flat_slots(result_items(out), self.adapter.is_tensor)
        if not flat.slots:
            raise contract_error(
                self.cls,
                f"forward returned no tensor output ({type(out).__name__}); eager requires at least "
                "one output to be a tensor, or a list/tuple directly holding tensors",
                "forward",
            )
        self.outputs = _Outputs(out, flat, self._carried_stop_gradient(carried, flat))
        recorded_ctx = context.recorded(self.ctx)
        if recorded_ctx is not None:
            self.forward_body.keep(out, carried, self.outputs.carried_stop_gradient, recorded_ctx)
        self.adapter.save(carried)
        return flat.tensors()

    def _flipped_inputs(self, flipped: List[int]) -> None:
        """Inputs forward set `stop_gradient = False` on (ERNIE's FusedUnpermutation on its
        tokens): in eager forward gets the caller's tensor itself, which then needs a gradient
        and gets it through the op, as its slot is read after forward. So the caller's value
        and the op's input need one too. Under to_static a tensor the caller fed to the program
        is an eager tensor whose flag the cached program cannot set at each call: refused. SOT,
        which simulates the caller's code with the flag it read before, runs the call eagerly."""
        if not flipped:
            return
        if scope.current().sot_recording:
            raise sot.break_request(f"forward of {self.cls.__qualname__} sets stop_gradient = False on an "
                                    "input: the call runs eagerly, as in eager")
        callers = self.inputs.flat.tensors()
        fed = [i for i in flipped if self.adapter.fed(callers[i])]
        if fed and body.in_to_static():
            slot = next(s for s in self.inputs.flat.slots if fed[0] in s.tensors)
            raise contract_error(
                self.cls,
                f"forward sets stop_gradient = False on {self._label(slot)}, a tensor the caller passed "
                "to the to_static function with stop_gradient True; eager then gives that tensor a "
                "gradient, which a program built once cannot do at each call: set stop_gradient = False "
                "on it before calling the model",
                "forward",
            )
        for i in flipped:
            callers[i].stop_gradient = False
            self.inputs.values[i].stop_gradient = False
        self.needs_grad = self.grad_enabled

    def _replayed_forward(self, tensors: List[Any]) -> List[Any]:
        """forward's sub-block as the recording's, on the op's inputs `tensors`."""
        out, carried, carried_stop_gradient, recorded_ctx = self.forward_body.replayed(tensors)
        context.restored(self.ctx, *recorded_ctx)
        self.outputs = _Outputs(out, flat_slots(result_items(out), self.adapter.is_tensor), carried_stop_gradient)
        self.adapter.save(carried)
        return self.outputs.flat.tensors()

    def _call_inputs(self) -> List[Any]:
        """What a whole call takes: the op's inputs, then the values they are copies of (the
        legacy IR's backward reads a saved parameter itself, `LegacyAdapter.restore`)."""
        return self.inputs.values + self.inputs.flat.tensors()

    def _carried_stop_gradient(self, carried: List[Any], flat: Flat) -> List[bool]:
        """Whether each tensor ctx carries to backward stops gradient there, as in eager.

        A tensor forward made stops gradient (grad mode is off in forward), but one it also
        returns is, in eager, the output itself, which `apply` then gives the op's gradient
        (`_returned`): a backward that reads it (Tanh saving its output) is differentiable
        through it, as a double backward asks.
        """
        tensors = flat.tensors()
        in_output_slot = {i for slot in flat.slots for i in slot.tensors}
        stops = []
        for value in carried:
            index = next((i for i in in_output_slot if self.adapter.same(tensors[i], value)), None)
            if index is None:
                stops.append(value.stop_gradient)
            else:
                stops.append(not self.needs_grad or self._gets_no_gradient(tensors[index]))
        return stops

    def backward_block(self, *grads: Any) -> List[Any]:
        """backward's sub-block: backward run on the output gradients; one gradient (or
        None) per op input."""
        outputs = self._forward_result()
        # A backward that re-runs forward (recompute) reads only saved tensors first: an
        # executor would start every block's re-run as soon as forward is done, and the memory
        # the recompute saves would be spent. Its saved tensors wait for the gradients.
        after = [g for g in grads if self.adapter.is_tensor(g)] if regrad.reruns_forward(self.backward) else []
        restored = self.adapter.restore(len(outputs.carried_stop_gradient), after)
        # As eager's saved tensors, each keeps its stop_gradient (a recompute backward
        # detaches the saved inputs and asks for the gradient of those that need one).
        for value, stop_gradient in zip(restored, outputs.carried_stop_gradient):
            value.stop_gradient = stop_gradient
        backward = self.bodies.backward()
        if backward.recorded:
            (gradients,) = backward.replayed(restored + list(grads))
            return self._own_gradients(gradients)
        context.enter_backward(self.state, restored)
        count = len(outputs.flat.positions)
        if len(grads) != count:
            raise contract_error(self.cls, f"got {len(grads)} output gradient(s) for {count} output tensor(s)")
        slot_grads = slot_gradients(list(grads), outputs.flat.slots)
        self._check_backward_arity(len(slot_grads))
        # A backward built inside a forward (the legacy IR builds a nested op's with it) is
        # no forward body: its ops are built as backward's own.
        def build(static_backward: Callable[..., Any]) -> List[Any]:
            with backward.built(restored + list(grads)):
                with scope.entered(backward_depth=scope.current().backward_depth + 1, forward_mode=None), \
                        body.converted_code_semantics(self.adapter), body.eager_backward_grad_mode(), \
                        body.no_autograd_backward(), body.body_rules(self.cls, "backward", self.adapter, []):
                    result = structure.map_leaves(inplace.latest, static_backward(self.ctx, *slot_grads))
                return self._input_grads(result)

        flat = written.run(self.static_backward, build, self.adapter, self._rewinding(restored, None))
        if self.adapter.foreign_value(flat) is not None:
            raise contract_error(
                self.cls,
                "backward uses a tensor that reaches it neither as an argument of apply nor "
                "through ctx (a closure, a global, an attribute of another object); under "
                "to_static backward is built on a copy of the traced program, where that tensor "
                "is not: pass it to apply, or save it with ctx.save_for_backward",
                "backward",
            )
        backward.keep(flat)
        return self._own_gradients(flat)

    def _rewinding(self, values: List[Any], stopped: Optional[List[bool]]) -> Callable[[], None]:
        """What makes ctx, and the flags of `values` (`stopped`: as they were; None: as they are
        now), as they are now again after a body run as written was refused (`written.run`)."""
        held = context.checkpoint(self.ctx)
        flags = [value.stop_gradient for value in values] if stopped is None else list(stopped)

        def rewind() -> None:
            context.rewind(self.ctx, held)
            for value, flag in zip(values, flags):
                value.stop_gradient = flag

        return rewind

    def _own_gradients(self, flat: List[Any]) -> List[Any]:
        """Each input's gradient (or None) as a value of its own.

        Returning one value for several inputs (`return dy, dy`) mixes up their gradients
        in PIR's autodiff (paddle 3.3.1) and, in the legacy IR, `static_pylayer` renames the
        returned variable to `<input>@GRAD` once per input (paddle 2.6.2), which also breaks
        when it is an incoming gradient or a saved tensor. A value backward's own ops made,
        returned once, is its own already.
        """
        return [g if g is None or self.adapter.own_gradient(g, flat) else self.adapter.copy(g) for g in flat]

    def _returned(self, outs: List[Any], needs_grad: bool) -> Any:
        """forward's result with its tensors replaced by the op's outputs, each stopping
        gradient as eager's would."""
        outputs = self._forward_result()
        tensors = outputs.flat.tensors()
        in_output_slot = {i for slot in outputs.flat.slots for i in slot.tensors}
        for index, (inner, outer) in enumerate(zip(tensors, outs)):
            # As eager: when an input needs a gradient, the tensors of the output slots get
            # one (even if forward made them under no_grad), but for non-differentiable ones.
            outer.stop_gradient = not needs_grad or index not in in_output_slot or self._gets_no_gradient(inner)
        # One tensor returned in several places (`return y, y`) is one tensor in eager, in
        # the slot of its last place (eager_py_layer.cc sets its slot once per place): the
        # caller gets that output everywhere, and backward zeros for the places before.
        last = last_places(tensors, self.adapter.same)
        return structure.pack_as(outputs.out, outputs.flat.with_tensors([outs[j] for j in last]))

    def _gets_no_gradient(self, output: Any) -> bool:
        """Eager semantics: outputs marked non-differentiable, and inputs returned as they
        are after `mark_not_inplace` (eager returns a new tensor that gradients do not
        flow through), get no gradient."""
        if _is_in(output, self.state.non_differentiable):
            return True
        return _is_in(output, self.state.not_inplace) and _is_in(output, self.inputs.values)

    def _no_backward_message(self) -> str:
        return str(
            contract_error(
                self.cls,
                "a gradient was requested through this PyLayer, which has no backward "
                "(eager raises NotImplementedError here too); define backward, or keep it out "
                "of the gradient path (stop_gradient inputs, paddle.no_grad)",
                "forward",
            )
        )

    def _check_backward_arity(self, count: int) -> None:
        signature = _signature(self.backward)
        if signature is None:
            return
        try:
            signature.bind(object(), *([None] * count))
        except TypeError:
            raise contract_error(
                self.cls,
                f"backward{signature} cannot take the {count} output gradient(s) eager passes it: "
                f"one per output of forward (a tensor, or a list/tuple holding tensors)",
                "backward",
            ) from None

    def _input_grads(self, result: Any) -> List[Any]:
        """backward's result as one gradient (or None) per op input, by eager's rules.

        Where backward is built with the op, before anyone asks for a gradient (the legacy
        IR), a gradient for a slot that stops gradient, which eager refuses only when
        backward runs, is dropped instead: nothing can use it.
        """
        slots, inputs = self.inputs.flat.slots, self.inputs.values
        returned = list(result) if isinstance(result, tuple) else [result]
        if len(returned) > len(slots):
            raise contract_error(
                self.cls,
                f"backward returned {len(returned)} gradient(s), but forward has {len(slots)} "
                "gradient slot(s): one per argument that is a tensor or a list/tuple holding tensors",
                "backward",
            )
        flat: List[Any] = [None] * len(inputs)
        for k, slot in enumerate(slots):
            first = inputs[slot.tensors[0]]
            if k >= len(returned):
                if not first.stop_gradient:
                    raise contract_error(
                        self.cls,
                        f"backward returned {len(returned)} gradient(s), leaving out {self._label(slot)}, "
                        "which needs a gradient (eager allows leaving out only trailing arguments that stop gradient)",
                        "backward",
                    )
                continue
            grad = returned[k]
            if grad is None:
                continue
            if first.stop_gradient:
                if self.adapter.backward_built_with_forward:
                    continue
                raise contract_error(
                    self.cls,
                    f"backward returned a gradient for {self._label(slot)}, which stops gradient; "
                    "eager requires None there",
                    "backward",
                )
            for i, g in zip(slot.tensors, self._slot_grads(slot, grad)):
                flat[i] = None if g is None else self._checked_grad(g, inputs[i], slot)
        return flat

    def _label(self, slot: Slot) -> str:
        return self.layout.labels[slot.number]

    def _slot_grads(self, slot: Slot, grad: Any) -> List[Any]:
        is_tensor = self.adapter.is_tensor
        if not slot.listed:
            if not is_tensor(grad):
                raise contract_error(
                    self.cls,
                    f"backward returned {type(grad).__name__} for {self._label(slot)}, a tensor; "
                    "expected a tensor or None",
                    "backward",
                )
            return [grad]
        if not isinstance(grad, (list, tuple)) or not all(g is None or is_tensor(g) for g in grad):
            raise contract_error(
                self.cls,
                f"backward returned {type(grad).__name__} for {self._label(slot)}, a list/tuple of "
                f"{len(slot.tensors)} tensor(s); expected a list or tuple of tensors (or None)",
                "backward",
            )
        if len(grad) != len(slot.tensors):
            raise contract_error(
                self.cls,
                f"backward returned {len(grad)} gradient(s) for {self._label(slot)}, which holds "
                f"{len(slot.tensors)} tensor(s)",
                "backward",
            )
        return list(grad)

    def _checked_grad(self, grad: Any, tensor: Any, slot: Slot) -> Any:
        """A gradient of `tensor`'s shape (else an error) and dtype (cast, as eager 3.x does)."""
        if shapes_conflict(grad.shape, tensor.shape):
            raise contract_error(
                self.cls,
                f"backward returned a gradient of shape {list(grad.shape)} for {self._label(slot)}, "
                f"a tensor of shape {list(tensor.shape)}",
                "backward",
            )
        if grad.dtype != tensor.dtype:
            return body.cast(grad, tensor.dtype)
        return grad
