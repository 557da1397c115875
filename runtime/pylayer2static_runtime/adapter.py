"""`IrAdapter`: what `PyLayerOp` asks of an IR, one implementation per IR.

`PirAdapter` (pir/adapter.py, paddle 3.x PIR `paddle.pir.Value`) and `LegacyAdapter` (legacy/adapter.py,
the Program IR of paddle 2.6 and of 3.x with PIR off, `paddle.static.Variable`) differ in
how `static_pylayer` takes inputs, carries saved tensors to backward and builds backward
(with the op, or at autodiff time); op.py asks an IR only through this protocol. Each IR registers
its adapter with `register_ir` (install.py).
"""
from typing import Any, Callable, ContextManager, Dict, List, Optional, Protocol, Tuple

from .replay import Tapes


class IrAdapter(Protocol):
    """Per-op glue between `PyLayerOp` and one IR's `static_pylayer`."""

    backward_built_with_forward: bool
    """Backward is built with the op (legacy), not when autodiff asks for it (PIR)."""
    tapes: Tapes
    """How the IR records a body's ops and replays them for a call alike (`replay.py`)."""

    def is_tensor(self, value: Any) -> bool:
        """Whether `value` is a tensor of the program being built."""

    def grad_enabled(self) -> bool:
        """Whether the op is built where gradients are recorded."""

    def fed(self, value: Any) -> bool:
        """Whether `value` is fed to the program (a `data` op's, or the legacy IR's data
        variable): under to_static, the caller's eager tensor, whose flags the program cannot set."""

    def same(self, a: Any, b: Any) -> bool:
        """Whether two tensors are one."""

    def inplace_map(self) -> Any:
        """dy2static's record of the in-place writes of the IR's programs (`x[i] = v` rebinds
        `x` to the write's result when converted code loads it): `get`/`add` by program, and
        `save_checkpoint`/`restore_checkpoint`. Only the IR's own code reads it (`latest`,
        `write_in_place`; `body.converted_code_semantics` keeps it as a body found it)."""

    def latest(self, value: Any) -> Any:
        """`value` as the in-place writes followed so far in the program being built left it."""

    def write_in_place(self, write: Callable[[], Any], values: List[Any], target: Any) -> Any:
        """`write()`, an in-place API called on `values` that writes `target`, as the framework
        must run it in a body (it may read the views among `values` other than `target`, which
        only the written tensor makes differ from eager); its result, recorded as `target`
        after the write (`latest`) when it is a new tensor."""

    def viewed(self, value: Any) -> bool:
        """Whether an in-place write into `value` would reach another tensor in eager: `value`
        is a view (a slice, a transpose, ...) or has one, as the framework tracks them."""

    def own_gradient(self, value: Any, gradients: List[Any]) -> bool:
        """Whether backward may return `value` as it is (no copy) as an input's gradient."""

    def op_inputs(self, values: List[Any]) -> List[Any]:
        """The op's inputs for the argument tensors `values`."""

    def save(self, values: List[Any]) -> None:
        """At the end of forward's sub-block (built or replayed): its values stop gradient as the
        framework's later passes expect, and `values` (ctx's tensors) are carried to backward."""

    def restore(self, count: int, after: List[Any]) -> List[Any]:
        """At the start of backward: backward's view of the `count` carried values; each one
        that is not a parameter read only once the values `after` exist (none: as they are)."""

    def label(self, outputs: List[Any], cls: type, call: Tuple[Tuple[Any, ...], Dict[str, Any]]) -> None:
        """Name `cls` on the op that made `outputs`; `call`, the call as written, is recorded
        where an export can be trained after `jit.load` (`core/records.py`, `pir/reload.py`)."""

    def forward_only_backward(self, message: str, inputs: List[Any], needs_grad: bool) -> Optional[Callable[..., Any]]:
        """The backward of a PyLayer without one (raising `message` when a gradient is asked)."""

    def forward_grad_mode(self, grad_off: Callable[[], bool]) -> ContextManager[Callable[[bool], Any]]:
        """While forward's sub-block is built with grad mode off (eager's, `body.py`): a value
        an op makes while `grad_off()` stops gradient, as eager's forward under no_grad; yields
        the setter of the framework's own grad mode, called as forward sets the mode (a
        no-op where the IR has none)."""

    def body_semantics(self, method: str, rewrite: Callable[[List[str]], Optional[List[str]]]) -> ContextManager[Any]:
        """The framework as `method`'s ("forward", "backward") sub-block is built; once it is
        built, each of its ops, and of the blocks its ops hold, gets the call stack `rewrite`
        makes of its own (kept where it makes None): the stack the framework prints when the
        op fails at run time, and inlining keeps."""

    def append_pylayer(self, forward: Callable[..., List[Any]], inputs: List[Any], backward: Any) -> List[Any]:
        """Append the pylayer op of `forward` (returning its output tensors) and `backward` on
        `inputs` to the program being built, both sub-blocks built as the IR needs, and clean
        up what building it left; the op's outputs, one per tensor forward returned. `forward`
        and `backward` (the op's incoming gradients → its input gradients) are the only calls
        the IR makes back into this op's build: forward's now, backward's now too
        (`backward_built_with_forward`) or when autodiff asks for the op's gradient (PIR: the
        framework's `static_pylayer` keeps it for the op's vjp)."""

    def copy(self, value: Any) -> Any:
        """A new tensor of the block being built holding `value`'s value."""

    def op_mark(self) -> Any:
        """Where the block being built stands, for `take_back_ops` (`written.py`)."""

    def take_back_ops(self, mark: Any) -> None:
        """Remove the ops appended to the block being built since `mark`, with what they made
        (a body built as written, then refused: `written.py`; it made no block of its own)."""

    def collective_group(self, group: Any) -> Any:
        """What to pass as `group` to a static collective over `group`'s ranks (`dist.all_gather`);
        a ValueError saying why where the IR's static collectives cannot run on that group."""

    def reduce_scatter(self, value: Any, group: Any) -> Any:
        """This rank's slice along axis 0 of the sum of every rank's `value` over `group` (of
        two ranks or more), as an op of the program being built."""

    def foreign_value(self, values: List[Any]) -> Optional[Any]:
        """A value backward's block reads, or returns, from another program, else None."""


_IRS: List[Tuple[Callable[[], bool], Callable[[bool], IrAdapter], Callable[[], List[Any]]]] = []
"""(whether a program of the IR is being built, the IR's adapter for an op, the IR's records
in dy2static), innermost IR first: set once, by `install.py`."""


def register_ir(
    building: Callable[[], bool], adapter: Callable[[bool], IrAdapter], program_records: Callable[[], List[Any]],
) -> None:
    """Make `adapter(inside_backward)` the adapter of the programs for which `building()`;
    `program_records()`: the objects in which dy2static keeps the IR's records by
    `id(program)` (its parameters and in-place writes)."""
    _IRS.append((building, adapter, program_records))


def program_records() -> List[Any]:
    """The objects holding dy2static's records by `id(program)`, every IR's."""
    return [owner for _, _, records in _IRS for owner in records()]


def adapter_for_program(inside_backward: bool) -> IrAdapter:
    """The adapter of the program being built; `inside_backward`: the op is built inside
    another op's backward."""
    for building, adapter, _ in _IRS:
        if building():
            return adapter(inside_backward)
    raise RuntimeError("pylayer2static: no IR of the runtime builds this program (install() was not run)")
