"""The `ctx` object that a PyLayer's forward and backward receive in a static graph.

It mirrors the eager `PyLayerContext`: tensors saved with `save_for_backward` and
tensors stored as attributes (`ctx.attr = tensor`) are carried from the forward
sub-block to the backward sub-block by the IR adapter (a push/pop pipe in PIR,
same-named variables in the legacy Program IR); any other attribute is a plain
Python object shared by both.
"""
from typing import Any, Callable, Dict, List, Optional, Tuple

import paddle

from .core import structure

_STATE = "_p2s_state"


class _State:
    """What the context records; kept apart from the user's attributes."""

    def __init__(self, is_tensor: Callable[[Any], bool]) -> None:
        self.is_tensor = is_tensor
        self.saved: Tuple[Any, ...] = ()
        self.tensor_attrs: Dict[str, Any] = {}
        self.non_differentiable: List[Any] = []
        self.not_inplace: List[Any] = []
        # Backward-side stand-ins for the carried tensors, set by `enter_backward`.
        self.backward_values: Optional[List[Any]] = None

    def carried(self) -> Tuple[Any, Dict[str, Any]]:
        return self.saved, self.tensor_attrs


class StaticContext:
    """Static-graph stand-in for `paddle.autograd.PyLayerContext`."""

    def __init__(self, is_tensor: Callable[[Any], bool]) -> None:
        object.__setattr__(self, _STATE, _State(is_tensor))

    def __setattr__(self, name: str, value: Any) -> None:
        state: _State = object.__getattribute__(self, _STATE)
        if any(state.is_tensor(leaf) for leaf in structure.flatten(value)):
            state.tensor_attrs[name] = value
            if name in self.__dict__:
                object.__delattr__(self, name)
        else:
            state.tensor_attrs.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: tensor-valued attributes live here.
        if name == _STATE:
            raise AttributeError(name)
        state: _State = object.__getattribute__(self, _STATE)
        if name in state.tensor_attrs:
            if state.backward_values is None:
                return state.tensor_attrs[name]
            return _carried_in_backward(state)[1][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        state: _State = object.__getattribute__(self, _STATE)
        if state.tensor_attrs.pop(name, None) is None:
            object.__delattr__(self, name)

    @paddle.jit.not_to_static
    def save_for_backward(self, *tensors: Any) -> None:
        """Keep `tensors` (any nesting of lists/tuples/dicts) for `saved_tensor()` in backward."""
        object.__getattribute__(self, _STATE).saved = tensors

    @paddle.jit.not_to_static
    def saved_tensor(self) -> Tuple[Any, ...]:
        """Return what `save_for_backward` received, as a tuple, like eager mode."""
        state: _State = object.__getattribute__(self, _STATE)
        if state.backward_values is None:
            return tuple(state.saved)
        return tuple(_carried_in_backward(state)[0])

    @paddle.jit.not_to_static
    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Forward outputs among `tensors` get no gradient (stop_gradient=True)."""
        object.__getattribute__(self, _STATE).non_differentiable.extend(tensors)

    @paddle.jit.not_to_static
    def mark_not_inplace(self, *tensors: Any) -> None:
        """Eager semantics: an input among `tensors` that forward returns as it is
        comes back as a new tensor that gradients do not flow through."""
        object.__getattribute__(self, _STATE).not_inplace.extend(tensors)

    @paddle.jit.not_to_static
    def set_materialize_grads(self, value: bool) -> None:
        """Accepted; in a static graph nothing changes.

        Both IRs' autodiff (paddle 3.3.1 and 2.6.2) hand backward zero-filled gradients
        for outputs that get none, so backward sees zeros where eager with `False` passes
        None: the same result for a backward that treats None as zero, as it must.
        """


def state_of(ctx: StaticContext) -> _State:
    """The recorded state of `ctx` (for the op builder and the adapters)."""
    return object.__getattribute__(ctx, _STATE)


def recorded(ctx: StaticContext) -> Optional[Tuple[Any, Dict[str, Any], Dict[str, Any]]]:
    """What forward left in `ctx` for backward: the tensors saved, the tensor attributes and
    the other attributes; None when it marked tensors (`mark_non_differentiable`,
    `mark_not_inplace`), which a ctx made from this (`restored`) would not."""
    state = state_of(ctx)
    if state.non_differentiable or state.not_inplace:
        return None
    attrs = {name: value for name, value in vars(ctx).items() if name != _STATE}
    return state.saved, dict(state.tensor_attrs), attrs


def restored(ctx: StaticContext, saved: Tuple[Any, ...], tensor_attrs: Dict[str, Any], attrs: Dict[str, Any]) -> None:
    """Make `ctx` what forward left in another (`recorded`), on this call's tensors."""
    state = state_of(ctx)
    state.saved = saved
    state.tensor_attrs = dict(tensor_attrs)
    for name, value in attrs.items():
        object.__setattr__(ctx, name, value)


def checkpoint(ctx: StaticContext) -> Tuple[Dict[str, Any], Tuple[Any, ...], Dict[str, Any], List[Any], List[Any]]:
    """What `ctx` holds now, for `rewind`."""
    state = state_of(ctx)
    attrs = {name: value for name, value in vars(ctx).items() if name != _STATE}
    return attrs, state.saved, dict(state.tensor_attrs), list(state.non_differentiable), list(state.not_inplace)


def rewind(ctx: StaticContext, held: Tuple[Dict[str, Any], Tuple[Any, ...], Dict[str, Any], List[Any], List[Any]]) -> None:
    """Make `ctx` hold again what it held at `checkpoint` (a body run as written, then refused)."""
    attrs, saved, tensor_attrs, non_differentiable, not_inplace = held
    for name in [name for name in vars(ctx) if name != _STATE and name not in attrs]:
        object.__delattr__(ctx, name)
    for name, value in attrs.items():
        object.__setattr__(ctx, name, value)
    state = state_of(ctx)
    state.saved, state.tensor_attrs = saved, dict(tensor_attrs)
    state.non_differentiable, state.not_inplace = list(non_differentiable), list(not_inplace)


def carried_leaves(state: _State) -> List[Any]:
    """The tensors to carry from forward to backward, in a fixed order."""
    return [leaf for leaf in structure.flatten(state.carried()) if state.is_tensor(leaf)]


def enter_backward(state: _State, values: List[Any]) -> None:
    """Switch `ctx` to the backward side: carried tensors now read as `values`."""
    state.backward_values = list(values)


def _carried_in_backward(state: _State) -> Tuple[Any, Dict[str, Any]]:
    leaves = structure.flatten(state.carried())
    it = iter(state.backward_values or [])
    replaced = [next(it) if state.is_tensor(leaf) else leaf for leaf in leaves]
    return structure.pack_as(state.carried(), replaced)
