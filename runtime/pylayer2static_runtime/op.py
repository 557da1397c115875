"""`PyLayerOp`: one PyLayer call built as one `pylayer` op in a static graph.

The op's inputs are every tensor among the call's arguments (nested lists, tuples
and dicts included); non-tensor arguments go to forward as they are. The forward
sub-block runs the class's forward (converted with dy2static's `convert_to_static`,
so tensor-dependent `if`/`while` become control-flow ops) with a `StaticContext`;
the backward sub-block runs its backward on the output gradients. Outputs come back
in the structure forward returned.
"""
import contextlib
import inspect
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

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


class _Marker:
    """Where one argument of the call lands among forward's bound parameters."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


_NOT_PASSED = 1 << 30
"""Call index of a parameter filled by forward's default (after every passed argument)."""


class Bound(NamedTuple):
    """A call bound to forward's parameters.

    `args`/`kwargs` are what forward receives; `call_index[j]` is, for the j-th top-level
    item of `args + kwargs.values()`, its position in the call as written (positional
    arguments first, then keywords in the order written), or `_NOT_PASSED` for a default.
    """

    args: Tuple[Any, ...]
    kwargs: Dict[str, Any]
    call_index: List[int]


def bind(cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Bound:
    """Bind a call to forward's parameters; `DEFAULT` becomes forward's own default."""
    sig = forward_signature(cls)
    values = list(args) + list(kwargs.values())
    markers = [_Marker(i) for i in range(len(values))]
    try:
        bound = sig.bind(*markers[: len(args)], **dict(zip(kwargs, markers[len(args):])))
    except TypeError as exc:
        raise contract_error(cls, f"cannot call forward{sig}: {exc}") from None
    bound.apply_defaults()
    call_index: List[int] = []

    def resolve(name: str, item: Any) -> Any:
        if not isinstance(item, _Marker):  # a default filled in by apply_defaults
            call_index.append(_NOT_PASSED)
            return item
        value = values[item.index]
        if value is DEFAULT:
            default = sig.parameters[name].default
            if default is inspect.Parameter.empty:
                raise contract_error(cls, f"forward parameter '{name}' has no default")
            call_index.append(_NOT_PASSED)
            return default
        call_index.append(item.index)
        return value

    for name, item in list(bound.arguments.items()):
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            bound.arguments[name] = tuple(resolve(name, v) for v in item)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            bound.arguments[name] = {k: resolve(name, v) for k, v in item.items()}
        else:
            bound.arguments[name] = resolve(name, item)
    # `bound.args + bound.kwargs.values()` lists the parameters in signature order,
    # as `bound.arguments` does, so `call_index` lines up with it.
    return Bound(bound.args, bound.kwargs, call_index)


class _Calls:
    """The `apply` calls being built, as written (innermost last)."""

    stack: List[Tuple[type, Tuple[Any, ...], Dict[str, Any]]] = []


@contextlib.contextmanager
def call_as_written(cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Iterator[None]:
    """While building `cls.apply(*args, **kwargs)`, remember the call as written.

    A generated builder rebinds the call to forward's signature, which loses the order
    of the keywords; eager `apply` (paddle 3.3.1 and 2.6.2) matches backward's return
    values to the tensor arguments in the order they were passed (positional ones, then
    keywords as written), so `PyLayerOp` needs that order.
    """
    _Calls.stack.append((cls, tuple(args), dict(kwargs)))
    try:
        yield
    finally:
        _Calls.stack.pop()


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
        if _Calls.stack and _Calls.stack[-1][0] is cls:
            args, kwargs = _Calls.stack[-1][1:]
        self.args, self.kwargs, self._call_index = bind(cls, tuple(args), dict(kwargs))

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
        # One gradient slot per top-level argument holding tensors, in the order eager
        # matches backward's return values to them (the call as written); each slot
        # knows the positions of its leaves among `in_leaves`.
        items = list(self.args) + list(self.kwargs.values())
        starts = [0]
        for item in items:
            starts.append(starts[-1] + len(structure.flatten(item)))
        in_slots = sorted(
            (j for j, item in enumerate(items) if _has_tensor(item, is_tensor)),
            key=lambda j: self._call_index[j],
        )
        record: Dict[str, Any] = {}

        def forward_fn(*tensors: Any) -> List[Any]:
            leaves = list(in_leaves)
            for pos, tensor in zip(in_positions, tensors):
                leaves[pos] = tensor
            args, kwargs = structure.pack_as(call, leaves)
            out = static_forward(ctx, *args, **kwargs)
            out_leaves = structure.flatten(out)
            out_positions, out_tensors = structure.split(out_leaves, is_tensor)
            if not out_tensors:
                raise contract_error(
                    self.cls, f"forward returned no tensor ({type(out).__name__}); at least one output must be a tensor",
                    "forward",
                )
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
                    "backward",
                )
            by_leaf: Dict[int, Any] = {}
            for j, grad in zip(in_slots, returned):
                tensor_leaves = [p for p in range(starts[j], starts[j + 1]) if is_tensor(in_leaves[p])]
                by_leaf.update(zip(tensor_leaves, self._input_grads(items[j], grad, is_tensor)))
            flat = [by_leaf[p] for p in in_positions]
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
                    self.cls, f"backward returned {type(grad).__name__} for a tensor input; expected a tensor or None",
                    "backward",
                )
            return [grad]
        grads = [g for g in structure.flatten(grad) if g is None or is_tensor(g)]
        if len(grads) != count:
            raise contract_error(
                self.cls,
                f"backward returned {len(grads)} gradient(s) for an input holding {count} tensor(s)",
                "backward",
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
