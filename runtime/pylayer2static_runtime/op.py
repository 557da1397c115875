"""`PyLayerOp`: one PyLayer call built as one `pylayer` op in a static graph.

The op's inputs are every tensor among the call's arguments (nested lists, tuples
and dicts included); non-tensor arguments go to forward as they are. The forward
sub-block runs the class's forward (converted with dy2static's `convert_to_static`,
so tensor-dependent `if`/`while` become control-flow ops) with a `StaticContext`;
the backward sub-block runs its backward on the output gradients. Outputs come back
in the structure forward returned.
"""
import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

import paddle
from paddle.static.nn import static_pylayer

from . import context, structure
from .errors import contract_error, reraise_with_user_lines

_SLOTS_NOTE = (
    "a tensor, or a list/tuple holding tensors, is one gradient slot; "
    "other values have no gradient"
)


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

        return PirAdapter()
    from .legacy import LegacyAdapter

    return LegacyAdapter()


def forward_signature(cls: type) -> inspect.Signature:
    """The signature of `cls.forward` without its context parameter."""
    sig = inspect.signature(cls.forward)
    params = list(sig.parameters.values())
    if not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise contract_error(cls, "forward must take the context as its first parameter")
    return sig.replace(parameters=params[1:])


def bind(cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """Bind a call to forward's parameters; `DEFAULT` becomes forward's own default."""
    sig = forward_signature(cls)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise contract_error(cls, f"cannot call forward{sig}: {exc}") from None
    for name, value in list(bound.arguments.items()):
        if value is DEFAULT:
            default = sig.parameters[name].default
            if default is inspect.Parameter.empty:
                raise contract_error(cls, f"forward parameter '{name}' has no default")
            bound.arguments[name] = default
    bound.apply_defaults()
    return bound.args, bound.kwargs


def _static_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` converted by dy2static (read from paddle 3.3.1 and 2.6.2 program_translator.py)."""
    from paddle.jit.dy2static.program_translator import convert_to_static, unwrap_decorators

    _, fn = unwrap_decorators(fn)
    try:
        return convert_to_static(fn)
    except (OSError, TypeError):  # no source to convert (e.g. built with exec): run as is
        return fn


def _is_in(value: Any, values: List[Any]) -> bool:
    return any(value is v for v in values)


def _gets_no_gradient(output: Any, state: Any, inputs: List[Any]) -> bool:
    """Eager semantics: outputs marked non-differentiable, and inputs returned as they
    are after `mark_not_inplace` (eager returns a new tensor that gradients do not
    flow through), get no gradient."""
    if _is_in(output, state.non_differentiable):
        return True
    return _is_in(output, state.not_inplace) and _is_in(output, inputs)


def _has_tensor(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    return any(is_tensor(leaf) for leaf in structure.flatten(value))


class _Building:
    """How many backward functions are being built (they can call PyLayers)."""

    backward_depth = 0


class PyLayerOp:
    """One `cls.apply(*args, **kwargs)` call, to be built as a `pylayer` op."""

    def __init__(self, cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
        self.cls = cls
        self.args, self.kwargs = bind(cls, tuple(args), dict(kwargs))

    def build(self, forward: Callable[..., Any], backward: Callable[..., Any]) -> Any:
        """Append the op to the program being built; return forward's outputs."""
        adapter = _adapter()
        is_tensor = adapter.is_tensor
        ctx = context.StaticContext(is_tensor)
        state = context.state_of(ctx)
        static_forward = _static_function(forward)
        if _Building.backward_depth:
            # Inside a backward, eager runs a PyLayer's forward without recording
            # a gradient: no op, no backward, just forward's values.
            return static_forward(ctx, *self.args, **self.kwargs)
        static_backward = _static_function(backward)

        call = (self.args, self.kwargs)
        in_leaves = structure.flatten(call)
        in_positions, inputs = structure.split(in_leaves, is_tensor)
        in_slots = [s for s in list(self.args) + list(self.kwargs.values()) if _has_tensor(s, is_tensor)]
        record: Dict[str, Any] = {}

        def forward_fn(*tensors: Any) -> List[Any]:
            leaves = list(in_leaves)
            for pos, tensor in zip(in_positions, tensors):
                leaves[pos] = tensor
            args, kwargs = structure.pack_as(call, leaves)
            out = static_forward(ctx, *args, **kwargs)
            out_leaves = structure.flatten(out)
            out_positions, out_tensors = structure.split(out_leaves, is_tensor)
            slots = list(out) if isinstance(out, tuple) else [out]
            record.update(
                out=out,
                leaves=out_leaves,
                positions=out_positions,
                tensors=out_tensors,
                slots=[s for s in slots if _has_tensor(s, is_tensor)],
            )
            carried = context.carried_leaves(state)
            record["carried"] = len(carried)
            adapter.save(carried)
            return out_tensors

        def backward_fn(*grads: Any) -> List[Any]:
            context.enter_backward(state, adapter.restore(record["carried"]))
            slot_grads = self._slot_grads(list(grads), record, is_tensor)
            _Building.backward_depth += 1
            try:
                result = static_backward(ctx, *slot_grads)
            finally:
                _Building.backward_depth -= 1
            returned = result if isinstance(result, tuple) else (result,)
            if len(returned) != len(in_slots):
                raise contract_error(
                    self.cls,
                    f"backward returned {len(returned)} gradient(s), but forward has "
                    f"{len(in_slots)} tensor input(s) ({_SLOTS_NOTE})",
                )
            flat: List[Any] = []
            for slot, grad in zip(in_slots, returned):
                flat.extend(self._input_grads(slot, grad, is_tensor))
            # Each input gets a gradient value of its own. Returning one value for
            # several inputs (`return dy, dy`) mixes up their gradients in PIR's
            # autodiff (paddle 3.3.1) and, in the legacy IR, `static_pylayer` renames
            # the returned variable to `<input>@GRAD` once per input (paddle 2.6.2),
            # which also breaks when it is an incoming gradient or a saved tensor.
            return [paddle.assign(g) if is_tensor(g) else g for g in flat]

        try:
            result = static_pylayer(forward_fn, inputs, backward_fn)
        except Exception as exc:  # noqa: BLE001 - re-raised, with the user's lines
            reraise_with_user_lines(exc)
        adapter.finish()
        if not record:
            raise contract_error(self.cls, "forward was not run while building the op")
        outs = adapter.outputs_as_list(result, len(record["tensors"]))
        leaves = list(record["leaves"])
        for pos, inner, outer in zip(record["positions"], record["tensors"], outs):
            if _gets_no_gradient(inner, state, inputs):
                outer.stop_gradient = True
            leaves[pos] = outer
        return structure.pack_as(record["out"], leaves)

    def _input_grads(self, slot: Any, grad: Any, is_tensor: Callable[[Any], bool]) -> List[Any]:
        """The gradients of the tensors in one input slot, flattened."""
        count = sum(1 for leaf in structure.flatten(slot) if is_tensor(leaf))
        if grad is None:
            return [None] * count
        if is_tensor(slot):
            if not is_tensor(grad):
                raise contract_error(
                    self.cls, f"backward returned {type(grad).__name__} for a tensor input; expected a tensor or None"
                )
            return [grad]
        grads = [g for g in structure.flatten(grad) if g is None or is_tensor(g)]
        if len(grads) != count:
            raise contract_error(
                self.cls,
                f"backward returned {len(grads)} gradient(s) for an input holding {count} tensor(s)",
            )
        return grads

    def _slot_grads(self, grads: List[Any], record: Dict[str, Any], is_tensor: Callable[[Any], bool]) -> List[Any]:
        """Group the flat output gradients by forward output slot, as eager passes them."""
        inner = record["tensors"]
        if len(grads) != len(inner):
            raise contract_error(
                self.cls, f"got {len(grads)} output gradient(s) for {len(inner)} output tensor(s)"
            )
        by_id = {id(t): g for t, g in zip(inner, grads)}
        return [structure.map_leaves(lambda v: by_id.get(id(v), v) if is_tensor(v) else v, s)
                if not is_tensor(s) else by_id[id(s)]
                for s in record["slots"]]
