"""A PyLayer call's bodies built again from the recording of an earlier call alike.

A model applies each of its PyLayers many times on tensors of the same shapes (a LoRA linear
in each projection of each block of a loop). Building a call runs forward's and backward's
Python op by op, and a call alike to one built before gets the same ops in its blocks but
for the values' names. So the first call's forward is recorded (`Recorded`: the IR's tape of
the body's ops, and where forward's result and what ctx keeps are among them), and so is the
first backward built of calls alike (`RecordedBackward`: its tape, and where the gradients
it returned are); a later call alike gets its bodies' ops as copies of the tapes' on its own
values (the IR's `Tapes.replay`) and a ctx like the recorded one, and `op.py` builds the rest
of the op (its inputs, the copies into and out of its blocks, the pylayer op, its outputs)
as for any call. `op.py` asks one `Source` per call (`source`) for each body as it builds it
(`Source.call`, `forward`, `backward`), and gets a `Body`: a recording to replay
(`Body.replayed`), or a body to run (`Body.built`) and then keep (`Body.keep`); this module
calls nothing of op.py's. Backward is recorded and replayed apart from forward, where the IR's tapes
of it last (`Tapes.backward_tapes`: the legacy IR's, built with the op; not PIR's, built when
autodiff asks and inlined at once, so each PIR backward runs, on the ctx a replay made like
the recorded call's). Where the whole call is in the program when its op is done (the legacy
IR: `Tapes.call_tapes`), the first call alike records all of it too (`RecordedCall`: its
blocks, its op, where its outputs are), and a later call alike gets copies of everything,
op and copies included; a call whose whole could not be recorded still replays its bodies.

Two calls are alike (`call_key`) when they have:
- the same class and forward and backward functions;
- arguments alike as forward gets them: each tensor by shape, dtype, stop_gradient, kind and
  which earlier argument it is, if one; any other value by type and value, immutable ones only;
- the same values of what the functions read besides, and functions that leave no mark a
  replay would not make (`core/purity.py`); a backward's reads are taken again as it is built;
- a top-level build (no body being built around it) needing a gradient alike;
- the same program, and the IR's state ops take at creation (`Tapes.environment`).
A call from another line is alike too where the copies can take the call's own call stack
(`frames.RecordedStacks.restackable`); otherwise only a call from the same stack (each frame's
code and line) is. A body that is not alike to any is built by running it, and recorded when the IR
finds its tape self-contained (`Tapes.recording`) and what it leaves (its result, ctx's
attributes, the gradients) is tensors of the tape or immutable values.
`P2S_REPLAY=0` in the environment builds every call by running its bodies.
"""
import contextlib
import os
from typing import Any, Callable, Dict, Hashable, Iterator, List, NamedTuple, Optional, Protocol, Tuple

from . import frames
from .core import purity, scope, structure

_KEPT = 1024
_recorded: Dict[Hashable, Any] = {}
"""Recordings (`Recorded`, `RecordedBackward`) by call key (a cache, cleared when it holds
`_KEPT`)."""


class Tape(Protocol):
    """The ops a body built, as the IR recorded them."""

    stacks: frames.RecordedStacks
    """Its ops' call stacks (`restackable`: a replay from another stack can give each op that stack)."""

    def ref(self, value: Any) -> Optional[Hashable]:
        """How a replay finds `value` (an input of the body, or a value its ops made), or None."""


class Tapes(Protocol):
    """An IR's recording and replaying of a body's ops."""

    backward_tapes: bool
    """Whether a backward's tape lasts until a call alike builds its backward (else every
    backward is built by running it, on the ctx its forward's recording gives)."""

    def environment(self) -> Hashable:
        """The program being built (while its tapes may be replayed) and the IR state an op
        takes as it is created (attributes not set by its builder)."""

    def recording(self, inputs: List[Any]) -> Any:
        """A context manager around a body built on `inputs`: yields a list, holding after it
        the body's `Tape`, or None where a replay could not build the same."""

    def replay(self, tape: Tape, inputs: List[Any]) -> Callable[[Hashable], Any]:
        """Append `tape`'s ops on `inputs` (as the recorded body's, in order) to the block
        being built; what each ref of the tape is now."""

    call_tapes: bool
    """Whether a whole call is in the program when its op is done, to be recorded
    (`call_recording`) and replayed (`replay_call`); IRs without leave those two out."""

    def call_recording(self, inputs: List[Any]) -> Any:
        """As `recording`, around a whole call on the op's `inputs` (its op and blocks)."""

    def replay_call(self, tape: Tape, inputs: List[Any]) -> Callable[[Hashable], Any]:
        """Append `tape`'s whole call on the op's `inputs` to the block being built; what each
        ref of the tape is now."""


class _Ref:
    """A tensor of a recorded structure: its ref in the tape."""

    __slots__ = ("key",)

    def __init__(self, key: Hashable) -> None:
        self.key = key


class Recorded(NamedTuple):
    """A call's forward as recorded, to build a call alike again."""

    forward: Tape
    out: Any  # forward's result, its tensors `_Ref`s
    carried: List[_Ref]  # the tensors ctx carried to backward
    carried_stop_gradient: List[bool]
    ctx: Any  # ctx as forward left it (`context.recorded`), its tensors `_Ref`s


class RecordedCall(NamedTuple):
    """A whole call as recorded (`Tapes.call_tapes`), to build a call alike again."""

    call: Tape
    out: Any  # forward's result, its tensors `_Ref`s
    outputs: List[_Ref]  # the op's outputs
    carried_stop_gradient: List[bool]


class RecordedBackward(NamedTuple):
    """A call's backward as recorded, to build the backward of a call alike again."""

    backward: Tape
    gradients: List[Optional[_Ref]]  # backward's result, one per op input


def enabled() -> bool:
    return os.environ.get("P2S_REPLAY", "1") != "0"


def call_key(cls: type, functions: List[Callable[..., Any]], bound: Any, labels: List[str], needs_grad: bool,
             adapter: Any) -> Optional["CallKey"]:
    """What makes a call alike to another (the module's list), or None: not to be replayed.

    `bound`: forward's arguments as it gets them, `(args, kwargs)`; `labels`: the call's
    arguments as written, named; `adapter`: the IR's (`adapter.IrAdapter`)."""
    if not enabled() or scope.current() != _TOP_LEVEL:
        return None
    read = [purity.reads(fn) for fn in functions]
    if any(found is None for found in read):
        return None
    tensors: List[Any] = []

    def leaf(value: Any) -> Hashable:
        if adapter.is_tensor(value):
            earlier = next((i for i, seen in enumerate(tensors) if adapter.same(seen, value)), None)
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
    alike = (cls, *functions, arguments, tuple(labels), needs_grad, adapter.tapes.environment(), purity.guard(read[0]))
    return CallKey(alike, tuple((frame.f_code, frame.f_lineno) for frame in frames.caller_frames(1)), read[1])


class CallKey(NamedTuple):
    """What makes calls alike (`call_key`), the stack the call is built from, and what its
    backward reads besides (guarded as backward is built)."""

    alike: Hashable
    stack: Hashable
    backward_reads: Any

    def forward(self) -> Tuple[Hashable, ...]:
        return ("forward", self.alike)

    def backward(self, tapes: Tapes) -> Tuple[Hashable, ...]:
        return ("backward", self.alike, tapes.environment(), purity.guard(self.backward_reads))

    def call(self) -> Tuple[Hashable, ...]:
        """A whole call's: built as the op is, when forward's guards are taken too."""
        return ("call", self.alike, purity.guard(self.backward_reads))


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


class Body:
    """One body of a call as `Source` gives it (its forward, its backward, or the whole call):
    a recording of a call alike to replay (`recorded`, `replayed`), or a body to build by
    running it (`built`), whose recording is then kept for the calls alike to come (`keep`)."""

    def __init__(self, recorded: Optional[Tuple[Any, ...]], recording: Optional["_Recording"],
                 replay: Optional[Callable[[Tape, List[Any]], Callable[[Hashable], Any]]], kept: Any) -> None:
        self._recorded = recorded
        self._recording = recording
        self._replay = replay
        self._kept = kept

    @property
    def recorded(self) -> bool:
        """Whether a call alike's recording of this body is there, to be replayed."""
        return self._recorded is not None

    def replayed(self, inputs: List[Any]) -> Tuple[Any, ...]:
        """The recording's ops appended on `inputs` (as the recorded body's) to the block being
        built; what the recorded body left (the values `keep` was given), its tensors the
        replay's."""
        find = self._replay(self._recorded[0], inputs)
        return tuple(resolved(value, find) for value in self._recorded[1:])

    def built(self, inputs: List[Any]) -> Any:
        """Around the body built (by running it) on `inputs`: its ops recorded, where it is to
        be recorded."""
        return contextlib.nullcontext() if self._recording is None else self._recording.taped(inputs)

    def keep(self, *left: Any) -> None:
        """Keep the recording of the body just built, with what it left (forward: its result,
        the tensors ctx carried, their stop_gradient, ctx itself as `context.recorded` gives it;
        a whole call: forward's result, the op's outputs, the carried tensors' stop_gradient;
        backward: the gradient, or None, it gave each op input), if it can be replayed."""
        if self._recording is not None:
            self._recording.keep(self._kept, left)


_BUILT = Body(None, None, None, None)
"""A body not replayed, nor recorded."""


class Source:
    """Where a call's bodies come from: a recording of a call alike (`call_key`), or running
    them, recorded for the calls alike to come. `op.py` asks it for each body as it builds it."""

    def __init__(self, key: Optional[CallKey], tapes: Optional[Tapes], is_tensor: Callable[[Any], bool]) -> None:
        self._key = key
        self._tapes = tapes
        self._is_tensor = is_tensor

    def call(self) -> Body:
        """The whole call (`Tapes.call_tapes`: replayed with `Tapes.replay_call` on the op's
        inputs, then the values they are copies of)."""
        if self._key is None or not self._tapes.call_tapes:
            return _BUILT
        return self._body(self._key.call(), RecordedCall, self._tapes.replay_call, whole_call=True)

    def forward(self) -> Body:
        """forward's body (replayed on the op's inputs)."""
        if self._key is None:
            return _BUILT
        return self._body(self._key.forward(), Recorded, self._tapes.replay)

    def backward(self) -> Body:
        """backward's body, built now (replayed on the restored values, then the output
        gradients), where the IR's backward tapes last (`Tapes.backward_tapes`)."""
        if self._key is None or not self._tapes.backward_tapes:
            return _BUILT
        return self._body(self._key.backward(self._tapes), RecordedBackward, self._tapes.replay)

    def _body(self, kind: Tuple[Hashable, ...], kept: Any, replay: Any, whole_call: bool = False) -> Body:
        recorded = _recorded.get(kind) or _recorded.get((kind, self._key.stack))
        if recorded is not None:
            return Body(recorded, None, replay, kept)
        return Body(None, _Recording(kind, self._key.stack, self._tapes, self._is_tensor, whole_call), None, kept)


NOT_REPLAYED = Source(None, None, lambda value: False)
"""The source of a call whose bodies are always built by running them."""


def source(cls: type, functions: List[Callable[..., Any]], bound: Any, labels: List[str], needs_grad: bool,
           adapter: Any) -> Source:
    """Where the bodies of the call of `cls` (forward and backward `functions`) come from;
    `bound`, `labels`, `adapter` as `call_key` takes them."""
    return Source(call_key(cls, functions, bound, labels, needs_grad, adapter), adapter.tapes, adapter.is_tensor)


class _Recording:
    """One body's recording (forward's, backward's or a whole call's), kept for the calls
    alike to come if what it built and left can be replayed."""

    def __init__(self, kind: Tuple[Hashable, ...], stack: Hashable, tapes: Tapes, is_tensor: Callable[[Any], bool],
                 whole_call: bool) -> None:
        self.kind = kind
        self.stack = stack
        self.tapes = tapes
        self.is_tensor = is_tensor
        self.whole_call = whole_call
        self.tape: Optional[Tape] = None

    @contextlib.contextmanager
    def taped(self, inputs: List[Any]) -> Iterator[None]:
        """Record the ops a body built on `inputs` inside, or a whole call on the op's `inputs`
        (`tape` after it, None if refused)."""
        with (self.tapes.call_recording if self.whole_call else self.tapes.recording)(inputs) as holder:
            yield
        self.tape = holder[0]

    def keep(self, kept: Any, left: Tuple[Any, ...]) -> None:
        """Keep the recording as a `kept` (`Recorded`, `RecordedCall`, `RecordedBackward`) of
        the tape and what the body `left`, each tensor as its `_Ref`."""
        refs = self._refs(list(left))
        if refs is None:
            return
        if len(_recorded) >= _KEPT:
            _recorded.clear()
        _recorded[self.kind if self.tape.stacks.restackable else (self.kind, self.stack)] = kept(self.tape, *refs)

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
