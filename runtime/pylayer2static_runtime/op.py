"""`PyLayerOp`: one PyLayer call built as one `pylayer` op in a static graph.

The op follows eager `PyLayer.apply` (paddle 3.3.1 and 2.6.2
paddle/fluid/pybind/eager_py_layer.cc `pylayer_method_apply`, and
paddle/fluid/eager/pylayer/py_layer_node.cc `GradNodePyLayer::operator()`):

- forward gets the call exactly as written: `forward(ctx, *args, **kwargs)`;
- gradient slots of the inputs: each argument, positional ones first and then the
  keywords in the order written, that is a tensor (one slot) or a list/tuple directly
  holding tensors (one slot whose gradient is a list);
- gradient slots of the outputs: forward's result, or each item of it when it is a
  tuple or a list, that is a tensor or a list/tuple directly holding tensors; backward
  gets one gradient per output slot (a list for a list/tuple slot);
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
"""
import contextlib
import inspect
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

import paddle
from paddle.base.dygraph.base import _convert_into_variable
from paddle.static.nn import static_pylayer

from . import context, dy2static, eager_only, inplace, structure
from .convert import static_function
from .errors import contract_error, reraise_with_user_lines
from .patch import swapped


class _Default:
    """Sentinel type of `DEFAULT`."""

    _instance: Optional["_Default"] = None

    def __new__(cls) -> "_Default":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "pylayer2static_runtime.DEFAULT"

    def __reduce__(self) -> str:
        return "DEFAULT"


DEFAULT = _Default()
"""Stands for "forward's own default for this parameter" in generated builders."""


def _adapter() -> Any:
    # paddle 3.3.1 / 2.6.2: `in_pir_mode()` is True while a PIR program is built.
    if paddle.base.framework.in_pir_mode():
        from .pir import PirAdapter

        return PirAdapter(inside_backward=_Building.backward_depth > 0)
    from .legacy import LegacyAdapter

    return LegacyAdapter()


def forward_signature(cls: type) -> inspect.Signature:
    """The signature of `cls.forward` without its context parameter."""
    sig = inspect.signature(cls.forward)
    params = list(sig.parameters.values())
    if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return sig  # forward(*args): ctx is args[0]; the rest binds as it is
    if not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise contract_error(cls, "forward must take the context as its first parameter", "forward")
    return sig.replace(parameters=params[1:])


def bind(cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """Check that forward accepts the call; `DEFAULT` becomes forward's own default.

    Returns the call to make: unchanged when it holds no `DEFAULT` (the call as written,
    as eager passes it), else bound to forward's parameters in signature order.
    """
    sig = forward_signature(cls)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise contract_error(cls, f"cannot call forward{sig}: {exc}", "forward") from None
    if not any(v is DEFAULT for v in list(args) + list(kwargs.values())):
        return tuple(args), dict(kwargs)
    for name, value in list(bound.arguments.items()):
        if value is DEFAULT:
            default = sig.parameters[name].default
            if default is inspect.Parameter.empty:
                raise contract_error(cls, f"forward parameter '{name}' has no default", "forward")
            del bound.arguments[name]
    bound.apply_defaults()
    return bound.args, bound.kwargs


class _Calls:
    """The `apply` calls being built, as written (innermost last)."""

    stack: List[Tuple[type, Tuple[Any, ...], Dict[str, Any]]] = []


@contextlib.contextmanager
def call_as_written(cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Iterator[None]:
    """While building `cls.apply(*args, **kwargs)`, remember the call as written.

    A generated builder rebinds the call to forward's signature, which loses the order of
    the keywords and fills in defaults; eager `apply` passes forward the call as written
    and matches backward's return values to its arguments in that order, so `PyLayerOp`
    uses it.
    """
    _Calls.stack.append((cls, tuple(args), dict(kwargs)))
    try:
        yield
    finally:
        _Calls.stack.pop()


def _inplace_map() -> Any:
    """dy2static's record of in-place writes (`x[i] = v` rebinds `x` to set_value's
    output when converted code loads `x`), keyed by `id(program)` and never emptied for a
    program dy2static did not build (2.6.2 fills it under PIR only: here it stays empty).
    Left behind, a pure static program's entries outlive the program, and a later program
    given the same id reads values of the freed one (3.0.0-3.2.2: a segfault in
    DenseTensorArrayType::classof, or `can only get shape for dense` errors)."""
    return dy2static.parameter_recorder()._global_inplace_map


@contextlib.contextmanager
def converted_code_semantics() -> Iterator[None]:
    """Run converted forward/backward code as dy2static does, also in a pure static program.

    Outside to_static, converted code does not follow in-place writes (`out[i:j] = x`):
    paddle 3.3.1 `convert_load` consults the in-place map only in to_static mode, so a
    later `out` reads the tensor before the write (wrong values, no error), and paddle
    2.6.2 `Variable.__setitem__` refuses outside it. Both read the flag
    `global_var._in_to_static_mode_` (paddle/base/dygraph/base.py).
    """
    from paddle.base.dygraph import base
    from paddle.jit.dy2static.program_translator import ProgramTranslator

    # Both IRs' maps, under to_static too: in-place APIs record there while forward/backward
    # is built (inplace.py), and a backward built at autodiff time, after dy2static popped
    # the program's records, would leave them to a later program given the same id.
    maps = [_inplace_map(), ProgramTranslator.get_instance()._inplace_map]
    checkpoints = [recorded.save_checkpoint() for recorded in maps]
    previous = base.global_var._in_to_static_mode_
    base.global_var._in_to_static_mode_ = True
    try:
        yield
    finally:
        base.global_var._in_to_static_mode_ = previous
        for recorded, checkpoint in zip(maps, checkpoints):
            recorded.restore_checkpoint(checkpoint)


def _is_in(value: Any, values: List[Any]) -> bool:
    return any(value is v for v in values)


class Slot(NamedTuple):
    """One gradient slot: a tensor, or a list/tuple directly holding tensors."""

    number: int  # which argument (inputs) or which item of forward's result (outputs)
    listed: bool  # a list/tuple: its gradients travel as a list
    tensors: Tuple[int, ...]  # its tensors, as indices into the op's inputs or outputs


def eager_slots(items: List[Any], is_tensor: Callable[[Any], bool]) -> Tuple[List[Any], List[Slot]]:
    """The leaves of `items` (depth first) and eager's gradient slots among them."""
    leaves: List[Any] = []
    slots: List[Slot] = []
    count = 0
    for number, item in enumerate(items):
        members: List[int] = []
        for child in item if isinstance(item, (list, tuple)) else [item]:
            child_leaves = structure.flatten(child)
            direct = is_tensor(child)
            for leaf in child_leaves:
                if is_tensor(leaf):
                    if direct:
                        members.append(count)
                    count += 1
            leaves.extend(child_leaves)
        if members:
            slots.append(Slot(number, isinstance(item, (list, tuple)), tuple(members)))
    return leaves, slots


def result_items(out: Any) -> List[Any]:
    """Forward's result as eager splits it into output slots."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _known(shape: Any) -> Optional[List[int]]:
    try:
        return [int(d) for d in shape]
    except (TypeError, ValueError):
        return None


def _shapes_conflict(a: Any, b: Any) -> bool:
    """Two static shapes that cannot be the same tensor's (-1: unknown until run time)."""
    sa, sb = _known(a), _known(b)
    if sa is None or sb is None:
        return False
    if len(sa) != len(sb):
        return True
    return any(x >= 0 and y >= 0 and x != y for x, y in zip(sa, sb))


def _as_static(value: Any) -> Any:
    """An eager tensor in the call (a layer's parameter or buffer, as `*self.parameters()`
    passes them under to_static) as the program's variable, as dy2static converts one when
    an op reads it (paddle 3.3.1 and 2.6.2 `paddle.base.dygraph.base._convert_into_variable`);
    eager gives it a gradient slot like any tensor argument."""
    if isinstance(value, paddle.Tensor):
        return _convert_into_variable(value)
    return value


class _Building:
    """How many backward functions are being built (they can call PyLayers), and the grad
    mode of the one innermost (`paddle.enable_grad()` inside it turns it on)."""

    backward_depth = 0
    backward_mode: Any = False


class _BackwardEntry:
    """The grad mode at the top of a backward being built: off, as eager runs backward.

    Falsy for whoever reads the mode; when `no_grad`/`enable_grad` restore it on exit, the
    framework's own flag goes back to what it was outside, so the ops of backward's own
    code are built as they were (a gradient of them, as a double backward asks, is then
    refused by the framework as before, not silently none).
    """

    def __bool__(self) -> bool:
        return False


@contextlib.contextmanager
def eager_backward_grad_mode() -> Iterator[None]:
    """Build backward with grad mode off, as eager runs it, unless it turns it on.

    Eager runs backward with grad mode off; a recompute PyLayer turns it on
    (`with paddle.enable_grad():`) to re-run forward and `paddle.grad` it, and a PyLayer
    applied there then records its own backward. `no_grad`, `enable_grad` and
    `set_grad_enabled` read and set the mode through `is_grad_enabled` and
    `_set_grad_enabled` of paddle/base/dygraph/base.py (paddle 3.3.1 and 2.6.2); in a static
    program paddle 2.6.2 keeps no mode at all, so the mode is tracked here, and set in the
    framework too inside those blocks (PIR builds ops by it).
    """
    from paddle.base.dygraph import base

    is_grad_enabled, set_grad_enabled = base.is_grad_enabled, base._set_grad_enabled
    outer_mode = is_grad_enabled()
    entry = _BackwardEntry()

    def set_mode(mode: Any) -> None:
        _Building.backward_mode = mode if mode is entry else bool(mode)
        set_grad_enabled(outer_mode if mode is entry else mode)

    base.is_grad_enabled = lambda: _Building.backward_mode
    base._set_grad_enabled = set_mode
    outer_backward_mode, _Building.backward_mode = _Building.backward_mode, entry
    try:
        yield
    finally:
        base.is_grad_enabled, base._set_grad_enabled = is_grad_enabled, set_grad_enabled
        set_grad_enabled(outer_mode)
        _Building.backward_mode = outer_backward_mode


@contextlib.contextmanager
def no_autograd_backward(cls: type) -> Iterator[None]:
    """While backward is built, `paddle.autograd.backward` raises a contract error.

    Eager's accumulates into `.grad` of leaves, which no static graph has (paddle 3.3.1 and
    2.6.2 raise "We only support 'backward()' in dynamic graph mode", without the PyLayer);
    a backward can return `paddle.grad` of the re-run outputs instead, with the parameters
    passed to `apply` as arguments so that their gradients are returned too.
    """

    @paddle.jit.not_to_static
    def backward(*args: Any, **kwargs: Any) -> None:
        raise contract_error(
            cls,
            "backward calls paddle.autograd.backward, which accumulates into .grad and works in "
            "dynamic graphs only; return paddle.grad(outputs, inputs, grads) instead, passing "
            "the parameters to apply as arguments to get their gradients too (as "
            "CheckpointFunction-style recompute does)",
            "backward",
        )

    with swapped(paddle.autograd, "backward", backward):
        yield


@contextlib.contextmanager
def body_rules(cls: type, method: str, adapter: Any, foreign: List[Any]) -> Iterator[None]:
    """What forward's and backward's bodies alike are built under: the IR's own
    (`adapter.body_semantics`), in-place APIs followed (`foreign`: what forward may not
    write into, inplace.py) and eager-only code refused at the user's line (eager_only.py)."""
    with adapter.body_semantics(), inplace.followed(cls, method, foreign, adapter.same), \
            eager_only.guarded(cls, method):
        yield


class PyLayerOp:
    """One `cls.apply(*args, **kwargs)` call, to be built as a `pylayer` op."""

    def __init__(self, cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
        self.cls = cls
        if _Calls.stack and _Calls.stack[-1][0] is cls:
            args, kwargs = _Calls.stack[-1][1:]
        self.args, self.kwargs = bind(cls, tuple(args), dict(kwargs))
        self._names = [f"argument {i + 1}" for i in range(len(self.args))] + [f"argument '{k}'" for k in self.kwargs]

    def build(self, forward: Callable[..., Any], backward: Callable[..., Any]) -> Any:
        """Append the op to the program being built; return forward's outputs."""
        adapter = _adapter()
        is_tensor = adapter.is_tensor
        ctx = context.StaticContext(is_tensor)
        state = context.state_of(ctx)
        static_forward = static_function(forward, "forward")
        if _Building.backward_depth and not _Building.backward_mode:
            # Inside a backward with grad mode off, eager runs a PyLayer's forward
            # without recording a gradient: no op, no backward, just forward's values.
            return static_forward(ctx, *self.args, **self.kwargs)
        forward_only = backward is paddle.autograd.PyLayer.backward
        static_backward = None if forward_only else static_function(backward, "backward")

        call = (structure.map_leaves(_as_static, self.args), structure.map_leaves(_as_static, self.kwargs))
        items = list(call[0]) + list(call[1].values())
        in_leaves, in_slots = eager_slots(items, is_tensor)
        in_positions, inputs = structure.split(in_leaves, is_tensor)
        inputs = adapter.op_inputs(inputs)
        record: Dict[str, Any] = {}

        def forward_fn(*tensors: Any) -> List[Any]:
            leaves = list(in_leaves)
            for pos, tensor in zip(in_positions, tensors):
                leaves[pos] = tensor
            args, kwargs = structure.pack_as(call, leaves)
            with converted_code_semantics(), body_rules(self.cls, "forward", adapter, list(tensors)):
                out = structure.map_leaves(inplace.latest, static_forward(ctx, *args, **kwargs))
                carried = [inplace.latest(value) for value in context.carried_leaves(state)]
            out_leaves, out_slots = eager_slots(result_items(out), is_tensor)
            if not out_slots:
                raise contract_error(
                    self.cls,
                    f"forward returned no tensor output ({type(out).__name__}); eager requires at least "
                    "one output to be a tensor, or a list/tuple directly holding tensors",
                    "forward",
                )
            out_positions, out_tensors = structure.split(out_leaves, is_tensor)
            record.update(out=out, leaves=out_leaves, positions=out_positions, tensors=out_tensors, slots=out_slots)
            record["carried"] = len(carried)
            record["carried_stop_gradient"] = [value.stop_gradient for value in carried]
            adapter.save(carried)
            return out_tensors

        def backward_fn(*grads: Any) -> List[Any]:
            restored = adapter.restore(record["carried"])
            # As eager's saved tensors, each keeps its stop_gradient (a recompute backward
            # detaches the saved inputs and asks for the gradient of those that need one).
            for value, stop_gradient in zip(restored, record["carried_stop_gradient"]):
                value.stop_gradient = stop_gradient
            context.enter_backward(state, restored)
            slot_grads = self._backward_args(list(grads), record["slots"], len(record["tensors"]))
            self._check_backward_arity(backward, len(slot_grads))
            _Building.backward_depth += 1
            try:
                with converted_code_semantics(), adapter.backward_semantics(), eager_backward_grad_mode(), \
                        no_autograd_backward(self.cls), body_rules(self.cls, "backward", adapter, []):
                    result = structure.map_leaves(inplace.latest, static_backward(ctx, *slot_grads))
            finally:
                _Building.backward_depth -= 1
            flat = self._input_grads(result, in_slots, inputs, is_tensor, adapter.backward_built_with_forward)
            if adapter.foreign_value(flat) is not None:
                raise contract_error(
                    self.cls,
                    "backward uses a tensor that reaches it neither as an argument of apply nor "
                    "through ctx (a closure, a global, an attribute of another object); under "
                    "to_static backward is built on a copy of the traced program, where that tensor "
                    "is not: pass it to apply, or save it with ctx.save_for_backward",
                    "backward",
                )
            # Each input gets a gradient value of its own. Returning one value for
            # several inputs (`return dy, dy`) mixes up their gradients in PIR's
            # autodiff (paddle 3.3.1) and, in the legacy IR, `static_pylayer` renames
            # the returned variable to `<input>@GRAD` once per input (paddle 2.6.2),
            # which also breaks when it is an incoming gradient or a saved tensor.
            # A value backward's own ops made, returned once, is its own already.
            return [g if g is None or adapter.own_gradient(g, flat) else paddle.assign(g) for g in flat]

        needs_grad = adapter.grad_enabled() and any(
            not inputs[i].stop_gradient for slot in in_slots for i in slot.tensors
        )
        if forward_only:
            backward_callable = adapter.forward_only_backward(
                self._no_backward_message(), inputs, needs_grad
            )
        else:
            backward_callable = backward_fn
        try:
            result = static_pylayer(forward_fn, inputs, backward_callable)
        except Exception as exc:  # noqa: BLE001 - re-raised, with the user's lines
            reraise_with_user_lines(exc)
        adapter.finish()
        if not record:
            raise contract_error(self.cls, "forward was not run while building the op")
        outs = adapter.outputs_as_list(result, len(record["tensors"]))
        adapter.label(outs, self.cls, call)
        in_output_slot = {i for slot in record["slots"] for i in slot.tensors}
        leaves = list(record["leaves"])
        tensors = record["tensors"]
        for index, (pos, inner, outer) in enumerate(zip(record["positions"], tensors, outs)):
            # As eager: when an input needs a gradient, the tensors of the output slots get
            # one (even if forward made them under no_grad), but for non-differentiable ones.
            outer.stop_gradient = (
                not needs_grad or index not in in_output_slot or self._gets_no_gradient(inner, state, inputs)
            )
            leaves[pos] = outer
        for index, pos in enumerate(record["positions"]):
            # One tensor returned in several places (`return y, y`) is one tensor in eager, in
            # the slot of its last place (eager_py_layer.cc sets its slot once per place): the
            # caller gets that output everywhere, and backward zeros for the places before.
            last = max(j for j in range(index, len(tensors)) if adapter.same(tensors[j], tensors[index]))
            leaves[pos] = outs[last]
        return structure.pack_as(record["out"], leaves)

    @staticmethod
    def _gets_no_gradient(output: Any, state: Any, inputs: List[Any]) -> bool:
        """Eager semantics: outputs marked non-differentiable, and inputs returned as they
        are after `mark_not_inplace` (eager returns a new tensor that gradients do not
        flow through), get no gradient."""
        if _is_in(output, state.non_differentiable):
            return True
        return _is_in(output, state.not_inplace) and _is_in(output, inputs)

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

    def _backward_args(self, grads: List[Any], slots: List[Slot], count: int) -> List[Any]:
        """The output gradients grouped as eager passes them: one per output slot."""
        if len(grads) != count:
            raise contract_error(self.cls, f"got {len(grads)} output gradient(s) for {count} output tensor(s)")
        return [[grads[i] for i in slot.tensors] if slot.listed else grads[slot.tensors[0]] for slot in slots]

    def _check_backward_arity(self, backward: Callable[..., Any], count: int) -> None:
        try:
            signature = inspect.signature(backward)
        except (TypeError, ValueError):
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

    def _input_grads(
        self, result: Any, slots: List[Slot], inputs: List[Any], is_tensor: Callable[[Any], bool], lenient: bool
    ) -> List[Any]:
        """backward's result as one gradient (or None) per op input, by eager's rules.

        `lenient`: backward is built with the op, before anyone asks for a gradient (the
        legacy IR), so a gradient for a slot that stops gradient, which eager refuses only
        when backward runs, is dropped instead: nothing can use it.
        """
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
                        f"backward returned {len(returned)} gradient(s), leaving out {self._names[slot.number]}, "
                        "which needs a gradient (eager allows leaving out only trailing arguments that stop gradient)",
                        "backward",
                    )
                continue
            grad = returned[k]
            if grad is None:
                continue
            if first.stop_gradient:
                if lenient:
                    continue
                raise contract_error(
                    self.cls,
                    f"backward returned a gradient for {self._names[slot.number]}, which stops gradient; "
                    "eager requires None there",
                    "backward",
                )
            grads = self._slot_grads(slot, grad, is_tensor)
            for i, g in zip(slot.tensors, grads):
                flat[i] = None if g is None else self._checked_grad(g, inputs[i], slot)
        return flat

    def _slot_grads(self, slot: Slot, grad: Any, is_tensor: Callable[[Any], bool]) -> List[Any]:
        if not slot.listed:
            if not is_tensor(grad):
                raise contract_error(
                    self.cls,
                    f"backward returned {type(grad).__name__} for {self._names[slot.number]}, a tensor; "
                    "expected a tensor or None",
                    "backward",
                )
            return [grad]
        if not isinstance(grad, (list, tuple)) or not all(g is None or is_tensor(g) for g in grad):
            raise contract_error(
                self.cls,
                f"backward returned {type(grad).__name__} for {self._names[slot.number]}, a list/tuple of "
                f"{len(slot.tensors)} tensor(s); expected a list or tuple of tensors (or None)",
                "backward",
            )
        if len(grad) != len(slot.tensors):
            raise contract_error(
                self.cls,
                f"backward returned {len(grad)} gradient(s) for {self._names[slot.number]}, which holds "
                f"{len(slot.tensors)} tensor(s)",
                "backward",
            )
        return list(grad)

    def _checked_grad(self, grad: Any, tensor: Any, slot: Slot) -> Any:
        """A gradient of `tensor`'s shape (else an error) and dtype (cast, as eager 3.x does)."""
        if _shapes_conflict(grad.shape, tensor.shape):
            raise contract_error(
                self.cls,
                f"backward returned a gradient of shape {list(grad.shape)} for {self._names[slot.number]}, "
                f"a tensor of shape {list(tensor.shape)}",
                "backward",
            )
        if grad.dtype != tensor.dtype:
            return paddle.cast(grad, tensor.dtype)
        return grad
