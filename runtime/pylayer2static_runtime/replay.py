"""A PyLayer call's bodies built again from the recording of an earlier call alike.

A model applies each of its PyLayers many times on tensors of the same shapes (a LoRA linear
in each projection of each block of a loop). Building a call runs forward's and backward's
Python op by op, and a call alike to one built before gets the same ops in its blocks but
for the variables' names. So the first call's bodies are recorded (`Recording`: the IR's tape
of each body's ops, and where forward's result, ctx's tensors and the returned gradients are
among them) and a later call alike gets its bodies' ops as copies of the tapes' on its own
variables (`Recorded`, the IR's `Tapes.replay`); `op.py` builds the rest of the op (its
inputs, the copies into and out of its blocks, the pylayer op, its outputs) as for any call.

Two calls are alike (`call_key`) when they have:
- the same class and forward and backward functions;
- arguments alike as forward gets them: each tensor by shape, dtype, stop_gradient, kind and
  which earlier argument it is, if one; any other value by type and value, immutable ones only;
- the same values of what the functions read besides, and functions that leave no mark a
  replay would not make (`core/purity.py`);
- a top-level build (no body being built around it) needing a gradient alike;
- the IR's state that ops take at creation (`Tapes.environment`: role, name scope, device).
A call from another line is alike too where the IR can give the copies the call's own call
stack (`Tape.restackable`); otherwise only a call from the same stack (each frame's code and
line) is.
A call that is not alike to any is built by running its bodies, and recorded when the IR
finds its tapes self-contained (`Tapes.recording`) and ctx marked no output.
`P2S_REPLAY=0` in the environment builds every call by running its bodies.
"""
import contextlib
import os
from typing import Any, Callable, Dict, Hashable, Iterator, List, NamedTuple, Optional, Protocol

from . import frames
from .core import purity, scope, structure

_KEPT = 1024
_recorded: Dict[Hashable, "Recorded"] = {}
"""Recordings by call key (a cache, cleared when it holds `_KEPT`). A recording holds copies of
the ops, not the program they were built in."""


class Tape(Protocol):
    """The ops a body built, as the IR recorded them."""

    restackable: bool
    """Whether a replay from another stack gives each op that stack (else: the same stack only)."""

    def ref(self, value: Any) -> Optional[Hashable]:
        """How a replay finds `value` (an input of the body, or a value its ops made), or None."""


class Tapes(Protocol):
    """An IR's recording and replaying of a body's ops."""

    def environment(self) -> Hashable:
        """The IR state an op takes as it is created (attributes not set by its builder)."""

    def recording(self, inputs: List[Any]) -> Any:
        """A context manager around a body built on `inputs`: yields a list, holding after it
        the body's `Tape`, or None where a replay could not build the same."""

    def replay(self, tape: Tape, inputs: List[Any]) -> Callable[[Hashable], Any]:
        """Append `tape`'s ops on `inputs` (as the recorded body's, in order) to the block
        being built; what each ref of the tape is now."""


class _Ref:
    """A tensor of a recorded structure: its ref in the tape."""

    __slots__ = ("key",)

    def __init__(self, key: Hashable) -> None:
        self.key = key


class Recorded(NamedTuple):
    """A call's bodies as recorded, to build a call alike again."""

    forward: Tape
    out: Any  # forward's result, its tensors `_Ref`s
    carried: List[_Ref]  # the tensors ctx carried to backward
    carried_stop_gradient: List[bool]
    backward: Tape
    gradients: List[Optional[_Ref]]  # backward's result, one per op input


def enabled() -> bool:
    return os.environ.get("P2S_REPLAY", "1") != "0"


def call_key(cls: type, functions: List[Callable[..., Any]], bound: Any, labels: List[str], needs_grad: bool,
             is_tensor: Callable[[Any], bool], tapes: Optional[Tapes]) -> Optional["CallKey"]:
    """What makes a call alike to another (the module's list), or None: not to be replayed.

    `bound`: forward's arguments as it gets them, `(args, kwargs)`; `labels`: the call's
    arguments as written, named."""
    current = scope.current()
    if tapes is None or not enabled() or current != _TOP_LEVEL:
        return None
    read = [purity.reads(fn) for fn in functions]
    if any(found is None for found in read):
        return None
    tensors: List[Any] = []

    def leaf(value: Any) -> Hashable:
        if is_tensor(value):
            earlier = next((i for i, seen in enumerate(tensors) if seen is value), None)
            tensors.append(value)
            return ("tensor", tuple(value.shape), value.dtype, value.stop_gradient, type(value),
                    value.persistable, earlier)
        if purity.immutable(value):
            return purity.frozen(value)
        raise _Unalike

    try:
        arguments = _frozen_structure(bound, leaf)
    except _Unalike:
        return None
    alike = (cls, *functions, arguments, tuple(labels), needs_grad, tapes.environment(),
             *(purity.guard(found) for found in read))
    return CallKey(alike, tuple((frame.f_code, frame.f_lineno) for frame in frames.caller_frames(1)))


class CallKey(NamedTuple):
    """What makes calls alike (`call_key`), and the stack the call is built from."""

    alike: Hashable
    stack: Hashable


_TOP_LEVEL = scope.BuildScope(apis_followed=True)
"""The scope of a call built outside any body (with the in-place APIs followed, `builders.py`)."""


class _Unalike(Exception):
    """An argument that no other call's can stand for."""


def _frozen_structure(value: Any, leaf: Callable[[Any], Hashable]) -> Hashable:
    if isinstance(value, (list, tuple)):
        return type(value), tuple(_frozen_structure(item, leaf) for item in value)
    if isinstance(value, dict):
        return dict, tuple((key, _frozen_structure(item, leaf)) for key, item in value.items())
    return leaf(value)


def recorded(key: Optional[CallKey]) -> Optional[Recorded]:
    """The recording of a call alike, if one was kept."""
    return None if key is None else _recorded.get(key.alike) or _recorded.get(key)


class Recording:
    """A call's recording, made part by part as its op is built; kept by `keep` if every part
    could be recorded."""

    def __init__(self, key: CallKey, tapes: Tapes, is_tensor: Callable[[Any], bool]) -> None:
        self.key = key
        self.tapes = tapes
        self.is_tensor = is_tensor
        self.tape: Optional[Tape] = None
        self.parts: Dict[str, Any] = {}
        self.refused = False

    @contextlib.contextmanager
    def taped(self, inputs: List[Any]) -> Iterator[None]:
        """Record the ops a body built on `inputs` inside (`tape` after it, None if refused)."""
        with self.tapes.recording(inputs) as holder:
            yield
        self.tape = holder[0]

    def forward(self, out: Any, carried: List[Any], carried_stop_gradient: List[bool], marked: bool) -> None:
        """forward's part: its result, the tensors ctx carried; `marked`: ctx marked outputs
        (non-differentiable, not in place), which a replay does not make."""
        refs = self._refs([out, carried])
        if refs is None or marked:
            self.refused = True
            return
        self.parts.update(forward=self.tape, out=refs[0], carried=refs[1], carried_stop_gradient=carried_stop_gradient)

    def backward(self, gradients: List[Any]) -> None:
        """backward's part: the gradient (or None) it gave each op input."""
        refs = self._refs(gradients)
        if refs is None:
            self.refused = True
            return
        self.parts.update(backward=self.tape, gradients=refs)

    def keep(self) -> None:
        """Keep the recording, if complete, for the calls alike to come."""
        if self.refused or len(self.parts) != len(Recorded._fields):
            return
        if len(_recorded) >= _KEPT:
            _recorded.clear()
        restackable = self.parts["forward"].restackable and self.parts["backward"].restackable
        _recorded[self.key.alike if restackable else self.key] = Recorded(**self.parts)

    def _refs(self, value: Any) -> Optional[Any]:
        """`value` with each tensor as its `_Ref` in the tape; None if a tensor has none, or
        another leaf is not immutable (a replay would share it)."""
        tape = self.tape
        if tape is None:
            return None
        leaves = []
        for leaf in structure.flatten(value):
            if self.is_tensor(leaf):
                key = tape.ref(leaf)
                if key is None:
                    return None
                leaves.append(_Ref(key))
            elif leaf is None or purity.immutable(leaf):
                leaves.append(leaf)
            else:
                return None
        return structure.pack_as(value, leaves)


def resolved(value: Any, find: Callable[[Hashable], Any]) -> Any:
    """A recorded structure with each `_Ref` as what the replay made of it."""
    return structure.map_leaves(lambda leaf: find(leaf.key) if isinstance(leaf, _Ref) else leaf, value)
