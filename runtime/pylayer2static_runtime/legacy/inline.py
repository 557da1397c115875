"""Inlining the legacy Program IR's pylayer ops (paddle 2.6.2): the ops of an op's forward
block (and, in a training program, of its `pylayer_grad` op's backward block) replace it in the
global block, so the executor runs ordinary ops only (inline.py does this on PIR).

Read from paddle 2.6.2: paddle/fluid/operators/controlflow/pylayer_op.cc (the forward op runs
its block in a new child scope, kept in its `Scope` output; `pylayer_grad` runs the backward
block in that same scope, so backward finds forward's variables by name, then copies each
`<input>@GRAD` it wrote to the op's outside gradient name, `AssignLocalGradientToParentScope`,
and fills zeros where it wrote none) and python/paddle/jit/dy2static/partial_program.py
(`_append_backward_desc` hands the program after autodiff to `after_append_backward` and takes
the forward end it returns). In one scope, with the blocks' locals renamed where they shadow a
global name (`_unshadow`), the moved ops read and write what they did in the op's scope: numbers
do not change. A call whose blocks cannot be merged so (a block that is not the global block's
child, a `Scope` read by another op than its `pylayer_grad` in the global block) keeps its ops,
with a debug log saying why.
"""
import collections
import logging
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from paddle.base import core, unique_name
from paddle.base.framework import Operator

from .blocks import blocks_within, child_blocks, names_in_other_blocks
from .unused import drop_unused

LOG = logging.getLogger("pylayer2static_runtime")
CLASS_ATTR = "p2s_pylayer"
"""The attribute naming a PyLayer class (module.qualname) on its pylayer op, and on the ops
inlining takes out of it until their copies are dropped; an export keeps it on one op, naming
every class inlined (comma-separated: `inlined_classes`)."""
ROLE_ATTR = core.op_proto_and_checker_maker.kOpRoleAttrName()
BACKWARD_ROLE = int(core.op_proto_and_checker_maker.OpRole.Backward)


def _why_kept(global_block: Any, op: Any) -> str:
    """Why pylayer op `op` of `global_block` cannot be inlined, or '' if it can."""
    # [forward, backward]; `normalize_program` drops the backward block of the global
    # block's pylayer ops only, so a nested one moved here still has it: an export runs
    # forward alone.
    ids = op._blocks_attr_ids("blocks")
    if not ids:
        return "no forward block"
    if global_block.program.block(ids[0]).parent_idx != global_block.idx:
        return "its block is not a child of the global block"
    return ""


def _fresh_name(program: Any, name: str) -> str:
    """A name no block of `program` declares, made from `name`."""
    while True:
        fresh = unique_name.generate(name + "@inlined")
        if all(not block.has_var(fresh) for block in program.blocks):
            return fresh


def _unshadow(global_block: Any, blocks: List[Any], own: Set[str] = frozenset()) -> None:
    """Rename each variable `blocks` declare under a name the global block has, but for `own`.

    The op's blocks run in a scope of its own, where each variable they declare is created
    anew (paddle 2.6.2 control_flow_op_helper.h `BuildScopeForControlFlowOp`, persistable ones
    aside): a local that shadows the global one, as a recompute backward's
    `paddle.grad` writes `<parameter>@GRAD` beside autodiff's. Both blocks share that scope, so
    a name they both declare gets one new name."""
    fresh: Dict[str, str] = {}
    for block in blocks:
        for name, var in list(block.vars.items()):
            if name not in own and not var.persistable and global_block.has_var(name):
                _rename(block, name, fresh.setdefault(name, _fresh_name(global_block.program, name)))


class _ScopeReaders:
    """The ops that read each pylayer op's `Scope` (its `pylayer_grad` op, where autodiff made
    one), with their blocks: indexed once per program and kept as inlining moves ops into the
    global block (a scan of every op of every block per call was quadratic: a third of the
    8-block LoRA LM's inlining)."""

    def __init__(self, program: Any) -> None:
        scopes = {name for block in program.blocks for op in block.ops if op.type == "pylayer"
                  for name in op.output("Scope")}
        self._readers: Dict[str, List[Tuple[Any, Any]]] = {name: [] for name in scopes}
        for block in program.blocks:
            for op in block.ops:
                for name in self._read_scopes(op):
                    self._readers[name].append((block, op))

    def _read_scopes(self, op: Any) -> Set[str]:
        return {name for name in op.input_arg_names if name in self._readers}

    def of(self, op: Any) -> List[Tuple[Any, Any]]:
        """(block, op) of each op that reads pylayer op `op`'s `Scope`."""
        return [reader for name in op.output("Scope") for reader in self._readers.get(name, ())]

    def moved(self, old: Any, block: Any, new: Any) -> None:
        """Op `old` is now `new`, in `block`."""
        for name in self._read_scopes(old):
            self._readers[name] = [(block, new) if op is old else (at, op) for at, op in self._readers[name]]


def _move_ops(global_block: Any, index: int, body: Any, cls: Optional[str], readers: _ScopeReaders) -> int:
    """Put `body`'s ops at `index` of `global_block`, in order, and empty `body`; the number moved.

    Each op's own blocks (control flow, a nested pylayer op) now find the variables they read
    from outside through the global block, where the body's are declared."""
    for var in list(body.vars.values()):
        if not global_block.has_var(var.name):
            global_block._clone_variable(var, force_persistable=False)
    for offset, inner in enumerate(body.ops):
        desc = global_block.desc._insert_op(index + offset)
        desc.copy_from(inner.desc)
        if cls is not None:
            desc._set_str_attr(CLASS_ATTR, cls)
        placed = Operator(global_block, desc)
        global_block.ops.insert(index + offset, placed)
        readers.moved(inner, global_block, placed)
        for child in child_blocks(global_block.program, inner):
            child.desc.set_parent_idx(global_block.idx)
    moved = len(body.ops)
    body.desc._remove_op(0, moved)
    del body.ops[:]
    for name in list(body.vars):
        body._remove_var(name, sync=False)
    return moved


def _inline(global_block: Any, index: int, copies: Set[str], readers: _ScopeReaders) -> int:
    """Replace the pylayer op at `index` (`_why_kept` says it can go) by its forward block's
    ops, which write its outputs themselves (`assign`); the number of ops put in its place. Its
    inputs, `op_inputs`' copies but for a variable that stops gradient, join `copies`."""
    op = global_block.ops[index]
    copies.update(op.input("Input"))
    body = global_block.program.block(op._blocks_attr_ids("blocks")[0])
    scopes = op.output("Scope")
    cls = op.attr(CLASS_ATTR) if op.has_attr(CLASS_ATTR) else None
    moved = _move_ops(global_block, index, body, cls, readers)
    global_block._remove_op(index + moved, sync=False)
    for name in scopes:
        global_block._remove_var(name, sync=False)
    return moved


def _grad_op(global_block: Any, op: Any, scope_readers: _ScopeReaders) -> Tuple[Optional[Any], str]:
    """`op`'s `pylayer_grad` op (None if no gradient reaches it), and why the pair must stay
    ('' if it can be inlined)."""
    why = _why_kept(global_block, op)
    if why:
        return None, why
    readers = scope_readers.of(op)
    if not readers:
        return None, ""
    if len(readers) > 1 or readers[0][0] is not global_block or readers[0][1].type != "pylayer_grad":
        return None, f"its scope is read by {len(readers)} op(s) ({readers[0][1].type} in block {readers[0][0].idx})"
    grad = readers[0][1]
    if global_block.program.block(grad._block_attr_id("backward_block")).parent_idx != global_block.idx:
        return None, "its backward block is not a child of the global block"
    return grad, ""


def _rename(block: Any, old: str, new: str) -> None:
    """`old` is `new` in `block` (its declaration too) and in the blocks its ops hold."""
    for current in [block, *blocks_within(block.program, block.ops)]:
        if current.has_var(old):
            current._rename_var(old, new)
        else:
            for op in current.ops:
                op._rename_input(old, new)
                op._rename_output(old, new)


def _inline_grad(global_block: Any, op: Any, grad: Any, readers: _ScopeReaders) -> List[Any]:
    """Replace `pylayer_grad` op `grad` of pylayer op `op` by its backward block's ops, reading
    each output gradient by the grad op's name for it and writing each input gradient under the
    op's outside name for it (a fresh name where autodiff wants none), and a zero gradient for an
    input they leave without one where autodiff wants it (pylayer_op.cc
    `AssignLocalGradientToParentScope`); the ops moved."""
    backward = global_block.program.block(grad._block_attr_id("backward_block"))
    empty = core.kEmptyVarName()
    # Backward's block reads `<output>@GRAD`, the name autodiff gives an output's gradient; a
    # gradient given from outside (`paddle.grad(y, x, grad_outputs=[dy])`, as a recompute
    # backward re-running a nested PyLayer calls it: paddle 2.6.2 backward.py
    # `_rename_grad_name_`) is renamed on the grad op only.
    for name, outside in zip(op.output("Out"), grad.input("Out" + core.grad_var_suffix())):
        inside = name + core.grad_var_suffix()
        if outside not in (empty, inside):
            _rename(backward, inside, outside)
    zeros: List[Tuple[str, str]] = []
    for name, outside in zip(grad.input("Input"), grad.output("Input" + core.grad_var_suffix())):
        inside = name + core.grad_var_suffix()
        if not backward.has_var(inside):
            if outside != empty:
                zeros.append((name, outside))
            continue
        target = outside if outside != empty else _fresh_name(global_block.program, inside)
        if target != inside:
            _rename(backward, inside, target)
    index = next(at for at, other in enumerate(global_block.ops) if other is grad)
    cls = op.attr(CLASS_ATTR) if op.has_attr(CLASS_ATTR) else None
    moved = _move_ops(global_block, index, backward, cls, readers)
    for offset, (name, outside) in enumerate(zeros):
        global_block._insert_op_without_sync(
            index + moved + offset, type="fill_any_like", inputs={"X": [name]}, outputs={"Out": [outside]},
            attrs={"value": 0.0, "dtype": -1, ROLE_ATTR: BACKWARD_ROLE})
    global_block._remove_op(index + moved + len(zeros), sync=False)
    return global_block.ops[index:index + moved]


def _log_kept(op: Any, why: str) -> None:
    if why:
        LOG.debug("pylayer op kept (%s): %s", why, op)


def _inline_calls(program: Any, backward_start: int, backward_ops: List[Any]) -> Tuple[int, Set[str], int]:
    """Inline each pylayer op of the global block, with its `pylayer_grad` op where the program
    has one (a training program after autodiff; an inference program has none); the number
    inlined, their inputs, and the index backward starts at after it (forward grew by the ops
    moved). The ops taken out of backward blocks join `backward_ops`.

    A pylayer op of backward (a recompute's forward run again under `enable_grad`) or of a
    forward block (a nested PyLayer) arrives in the global block with its block's ops, and is
    inlined in turn."""
    block = program.global_block()
    index = count = 0
    copies: Set[str] = set()
    readers = _ScopeReaders(program)
    while index < len(block.ops):
        op = block.ops[index]
        grad, why = _grad_op(block, op, readers) if op.type == "pylayer" else (None, "")
        if op.type != "pylayer" or why:
            _log_kept(op, why)
            index += 1
            continue
        forward = program.block(op._blocks_attr_ids("blocks")[0])
        if grad is None:
            _unshadow(block, [forward])
        else:
            backward = program.block(grad._block_attr_id("backward_block"))
            _unshadow(block, [forward, backward], {name + core.grad_var_suffix() for name in grad.input("Input")})
            backward_ops += _inline_grad(block, op, grad, readers)
        moved = _inline(block, index, copies, readers)
        if index < backward_start:
            backward_start += moved - 1
        count += 1
    return count, copies, backward_start


def _copies_of(copies: Set[str], keeper: Any = None) -> Callable[[Any], bool]:
    """Whether an `assign` is one the inlined calls needed (`_drop_copies`' `is_copy`): one
    their blocks made (marked `CLASS_ATTR`; but `keeper`), a copy of their inputs, or autodiff's
    copy of such a copy's gradient."""
    grads = {name + core.grad_var_suffix() for name in copies}
    return lambda op: op is not keeper and (
        op.has_attr(CLASS_ATTR) or op.output("Out")[0] in copies or op.input("X")[0] in grads)


def inline_training(program: Any, backward_start: int, kept: Set[str]) -> int:
    """Inline the pylayer ops of to_static's training program (after autodiff) and their
    `pylayer_grad` ops (`_inline_calls`), then drop the copies they needed (`_drop_copies`: of
    their inputs and outputs, of the gradients they read and return, and autodiff's of the
    input copies' gradients) and the ops of their backward whose outputs nothing reads
    (`unused.drop_unused`, all after `backward_start`); the index backward starts at after it.
    `kept`: the names the layer feeds, fetches or reads gradients from, by name. A static
    program the executor runs is inlined the same way (its `backward_start`, 0, is not used)."""
    backward_ops: List[Any] = []
    count, copies, backward_start = _inline_calls(program, backward_start, backward_ops)
    if not count:
        return backward_start
    dropped = _drop_copies(program, _copies_of(copies), kept)
    drop_unused(program, backward_ops, kept)
    _unmark(program.global_block().ops)
    LOG.debug("inlined %d pylayer op(s) of a training program, dropped %d copies", count, len(dropped))
    return backward_start - sum(1 for at in dropped if at < backward_start)


def inline_pylayers(program: Any, kept: Set[str] = frozenset()) -> int:
    """Inline the pylayer ops of an inference program's global block (an export, or to_static's
    program in eval mode: forward blocks only, `_inline_calls`); the number inlined.

    An export's pylayer op costs a scope and an interpreter of its own per run, and the
    predictor's passes do not enter its block (paddle 2.6.2 fuses nothing there, and its
    constant folding runs a pylayer op whose inputs are all parameters without its block:
    "The Variable type must be std::vector<Scope*>"). Its forward block's ops read the op's
    inputs and write its outputs by name, so in the global block they compute the same.
    An op of the block with blocks of its own (control flow, a nested pylayer op, inlined in
    turn) moves with them, reparented to the global block. Kept (debug log): an op whose block
    is not a child of the global block. `kept`: names read from outside the program by name
    (to_static's outputs), which keep their writers as fetched names do. One op keeps
    `CLASS_ATTR`, naming every class inlined (`inlined_classes`).
    """
    count, copies, _ = _inline_calls(program, 0, [])
    if not count:
        return 0
    block = program.global_block()
    marked = [op for op in block.ops if op.has_attr(CLASS_ATTR)]
    keeper = marked[0] if marked else None
    if keeper is not None:
        keeper._set_attr(CLASS_ATTR, ",".join(sorted({op.attr(CLASS_ATTR) for op in marked})))
    dropped = _drop_copies(program, _copies_of(copies, keeper), kept)
    _unmark([op for op in block.ops if op is not keeper])
    LOG.debug("inlined %d pylayer op(s) of an inference program, dropped %d copies", count, len(dropped))
    return count


def _unmark(ops: List[Any]) -> None:
    """Take `CLASS_ATTR` off the inlined ones of `ops` (a pylayer op left keeps it): a string
    attribute on each op cost paddle 2.6.2's predictor some 2 % of the tiny LM's latency
    (`tests/bench/twins.py`), and the executor needs none."""
    for op in ops:
        if op.type != "pylayer" and op.has_attr(CLASS_ATTR):
            op.desc.remove_attr(CLASS_ATTR)


def inlined_classes(ops: List[Any]) -> List[str]:
    """The PyLayer classes whose ops an inlined export holds, as `inline_pylayers` named them."""
    return sorted({name for op in ops if op.has_attr(CLASS_ATTR) for name in op.attr(CLASS_ATTR).split(",")})


class _Uses:
    """Where each name is read and written in a program's global block (op positions), and the
    names the program's other blocks or its fetch ops use (which keep their copies)."""

    def __init__(self, program: Any) -> None:
        self.readers: Dict[str, List[int]] = collections.defaultdict(list)
        self.writers: Dict[str, List[int]] = collections.defaultdict(list)
        self.elsewhere: Set[str] = set()
        for at, op in enumerate(program.global_block().ops):
            for name in op.input_arg_names:
                self.readers[name].append(at)
            for name in op.output_arg_names:
                self.writers[name].append(at)
            if op.type == "fetch":
                self.elsewhere.update(op.input_arg_names)
        self.elsewhere |= names_in_other_blocks(program)

    def read_original(self, ops: List[Any], at: int, source: str, copy: str) -> bool:
        """Let the readers of `copy`, written by the `assign` at `at` alone, read `source`,
        which nothing writes after it; False if they cannot."""
        if self.writers[copy] != [at] or any(w > at for w in self.writers[source]):
            return False
        for reader in self.readers[copy]:
            ops[reader]._rename_input(copy, source)
        self.readers[source] = [r for r in self.readers[source] if r != at] + self.readers.pop(copy)
        del self.writers[copy]
        return True

    def write_copy(self, ops: List[Any], at: int, source: str, copy: str) -> bool:
        """Let the one op that writes `source`, read by the `assign` at `at` alone, write `copy`
        instead, which nothing reads before `at` or writes but the `assign`; False if it cannot."""
        writers = self.writers[source]
        if (len(writers) != 1 or self.readers[source] != [at] or self.writers[copy] != [at]
                or any(r < at for r in self.readers[copy]) or source in ops[writers[0]].input_arg_names):
            return False
        ops[writers[0]]._rename_output(source, copy)
        self.writers[copy] = writers
        del self.writers[source], self.readers[source]
        return True


def _plain_variable(block: Any, name: str) -> bool:
    """A dense tensor variable of the program's own (not persistable: a parameter, a buffer)."""
    var = block._find_var_recursive(name)
    return var is not None and not var.persistable and var.type == core.VarDesc.VarType.LOD_TENSOR


def _drop_copies(program: Any, is_copy: Callable[[Any], bool], kept: Set[str] = frozenset()) -> List[int]:
    """Drop the `assign`s of an inlined program that only copied a value (`is_copy`: those the
    pylayer ops made); the positions they had. Either the copy's readers read the original
    (nothing writes the original after it), or the original's writer writes the copy (nothing
    else reads the original). A copy stays where it keeps a value apart, where another block
    or a fetch op uses a name, and for a name in `kept` (read or written by name from outside
    the program). Numbers do not change; each copy cost an op per run (paddle 2.6.2 has no pass
    that removes an `assign`)."""
    block = program.global_block()
    ops = block.ops
    uses = _Uses(program)
    stay = uses.elsewhere | set(kept)
    dropped: List[int] = []
    unused: List[str] = []
    for at in [at for at, op in enumerate(ops) if op.type == "assign" and is_copy(op)]:
        source, copy = ops[at].input("X")[0], ops[at].output("Out")[0]
        if source == copy or not _plain_variable(block, copy):
            continue
        if copy not in stay and uses.read_original(ops, at, source, copy):
            unused.append(copy)
        elif source not in stay and _plain_variable(block, source) and uses.write_copy(ops, at, source, copy):
            unused.append(source)
        else:
            continue
        dropped.append(at)
    for at in reversed(dropped):
        block._remove_op(at, sync=False)
    for name in unused:
        if block.has_var(name):
            block._remove_var(name, sync=False)
    return dropped


def keep_sub_block_variables(program: Any, pruned: Any) -> None:
    """Declare again, in `pruned`'s global block, the global variables of `program` that only
    sub-blocks use.

    Pruning for inference (paddle 2.6.2 `Program._prune_with_input` for an export, prune.cc
    `PruneBackward` for the eval program's clone for test) keeps the global block's variables
    that its remaining ops use and does not look into a pylayer op's blocks. Two kinds live
    there but are used only inside one: a parameter (a frozen weight a recompute PyLayer's run
    function uses without passing it to `apply`), which an export then does not save, and the
    output of an in-place write (`out[i:j] = x`: set_value's output is created in the global
    block, LayerHelper `_create_global_variable_for_type_inference`). The program then fails
    ("... not in VariableScope"), inlined or not.
    """
    source, top = program.global_block(), pruned.global_block()
    for block in pruned.blocks[1:]:
        for op in block.ops:
            for name in op.input_arg_names + op.output_arg_names:
                if block._find_var_recursive(name) is None and source.has_var(name):
                    top._clone_variable(source.var(name), force_persistable=False)


class InliningHook:
    """A `PartialProgramLayerHook` (paddle 2.6.2 partial_program.py) that inlines to_static's
    programs: the training program after autodiff, the eval program as it is made. It passes
    each program to the hook the framework set first (`inner`: `PrimHooker`), if any."""

    def __init__(self, layer: Any, inner: Any = None) -> None:
        self._layer = layer
        self.inner = inner

    def _kept(self) -> Set[str]:
        layer = self._layer
        values = list(layer._outputs.tolist()) + list(layer._inputs.tolist()) + list(layer._params)
        return {value.name for value in values if hasattr(value, "name")}

    def before_append_backward(self, forward_program: Any) -> Any:
        return self.inner.before_append_backward(forward_program) if self.inner else forward_program

    def after_append_backward(self, whole_program: Any, backward_start: int) -> Tuple[Any, int]:
        names = self._kept() | {name for names in self._layer._grad_var_names.values() for name in names}
        # paddle 2.6.2 partial_program.py `_append_backward_desc` passes the index of the
        # first op after the outputs' `fill_any_like`s counting one per output, a Python
        # value (`return 1, None, y, "tag"`) too, which has none; it takes that count off
        # again for forward's end. Inlining counts in ops: the ops it drops before the true
        # index are forward's, those after it backward's. Taking a copy of backward's for
        # forward's cut forward short of its outputs' writers ("memory's size is 0").
        outputs = self._layer._outputs
        values = len(outputs.tolist()) - len(outputs.var_ids)
        backward_start = inline_training(whole_program, backward_start - values, names) + values
        if self.inner:
            return self.inner.after_append_backward(whole_program, backward_start)
        return whole_program, backward_start

    def after_infer(self, infer_program: Any) -> Any:
        keep_sub_block_variables(self._layer._origin_main_program, infer_program)
        inline_pylayers(infer_program, self._kept())
        return self.inner.after_infer(infer_program) if self.inner else infer_program
