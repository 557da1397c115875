"""The legacy Program IR's `pylayer` op, built as paddle 2.6.2 `static_pylayer` builds it
(python/paddle/static/nn/static_pylayer.py), with its copies made as bare ops.

The op and its blocks are the framework's, op for op: forward's block ends with an `assign` of
each output into a variable of the parent block (`copy_var_to_parent_block`), backward's starts
with an `assign` of each output gradient, read under `<output>@GRAD`, into a variable of its own
(`copy_var_from_parent_block`), and what backward returns is renamed `<input>@GRAD` in its block
and the blocks inside it (pylayer_op.cc copies those to autodiff's names). The framework makes
each copy through `paddle.assign` (argument checks, a layer helper, the whole Python stack
recorded on the op) and syncs the whole program with its C++ description twice per call: those
copies were a third of building a chain of small PyLayers (cProfile, `tests/bench/construction.py`).
Here each copy is an `assign` desc with its role, name scope and device, the variables are
declared with the source's type, dtype and shape (what `assign`'s shape inference gives), and
only the blocks a rename touched are synced.
"""
from typing import Any, Callable, Dict, List, Optional

import paddle
from paddle.base import core, framework
from paddle.base.framework import Operator, Variable

from .blocks import blocks_within
from .inline import BACKWARD_ROLE, ROLE_ATTR

CALLSTACK_ATTR = core.op_proto_and_checker_maker.kOpCreationCallstackAttrName()  # "op_callstack"
NAME_SCOPE_ATTR = core.op_proto_and_checker_maker.kOpNameScopeAttrName()
DEVICE_ATTR = core.op_proto_and_checker_maker.kOpDeviceAttrName()
_TENSOR_ARRAY = core.VarDesc.VarType.LOD_TENSOR_ARRAY


def assign(block: Any, source: Any, target: Any, role: Optional[int] = None) -> None:
    """Append `assign(source) -> target` to `block`, with `role` (the program's current one if
    None), as `paddle.assign(source, target)` would append it: in the name scope and on the
    device (`paddle.static.device_guard`) in force (paddle 2.6.2 and 3.3.1 base/framework.py
    `Operator.__init__`)."""
    desc = block.desc.append_op()
    desc.set_type("assign")
    desc.set_input("X", [source.name])
    desc.set_output("Out", [target.name])
    desc._set_int32_attr(ROLE_ATTR, int(block.program._op_role) if role is None else role)
    desc._set_str_attr(NAME_SCOPE_ATTR, framework._full_name_scope())
    if framework._current_device is not None:
        desc._set_str_attr(DEVICE_ATTR, framework._current_device)
    desc.check_attrs()
    block.ops.append(Operator(block, desc))


def copy(block: Any, source: Any, role: Optional[int] = None) -> Any:
    """A new variable of `block` holding `source`'s value (`assign`)."""
    target = declare_like(block, source)
    assign(block, source, target, role)
    return target


def declare_like(block: Any, source: Any, name: Optional[str] = None) -> Any:
    """A variable of `block` of `source`'s type, dtype and shape (a fresh name if None)."""
    return block.create_var(name=name, type=source.type, dtype=source.dtype, shape=source.shape)


def append_pylayer(forward: Callable[..., List[Any]], inputs: List[Any],
                   backward: Optional[Callable[..., Any]]) -> List[Any]:
    """Append the pylayer op of `forward` (which returns its output variables, a list) and
    `backward` on `inputs` to the block being built; the op's outputs."""
    program = paddle.static.default_main_program()
    parent = program.current_block()
    forward_block = program._create_block()
    try:
        outputs = [_to_parent(parent, forward_block, var) for var in forward(*inputs)]
    finally:
        program._rollback()
    outputs = [var for var in outputs if isinstance(var, Variable)]
    op = parent.append_op(
        type="pylayer",
        inputs={"Input": [var for var in inputs if isinstance(var, Variable)]},
        outputs={"Out": outputs, "Scope": [parent.create_var(type=core.VarDesc.VarType.STEP_SCOPES)]},
        attrs={"blocks": [forward_block]},
    )
    if backward is not None:
        _append_backward(parent, op, forward_block, outputs, backward)
    return outputs


def _to_parent(parent: Any, block: Any, var: Any) -> Any:
    """forward's output `var` as the op's output, a variable of the parent block
    (`copy_var_to_parent_block`: a tensor array the parent has already is itself)."""
    if not isinstance(var, Variable):
        return var
    if var.type == _TENSOR_ARRAY and parent._find_var_recursive(var.name):
        return var
    target = declare_like(parent, var)
    assign(block, var, target)
    return target


def _append_backward(parent: Any, op: Any, forward_block: Any, outputs: List[Any],
                     backward: Callable[..., Any]) -> None:
    """Build backward's block of pylayer op `op` (`static_pylayer`'s second block)."""
    program = parent.program
    grads = []
    for var in outputs:
        if not parent.desc.has_var_recursive(var.name.encode()):
            raise ValueError(f"Grad var {var.name}@GRAD , we can't find its related forward var {var.name}")
        grads.append(declare_like(parent, var, var.name + core.grad_var_suffix()))
    block = program._create_block()
    try:
        inside = [grad if grad.type == _TENSOR_ARRAY and block._find_var_recursive(grad.name)
                  else copy(block, grad) for grad in grads]
        returned = backward(*inside)
    finally:
        program._rollback()
    renames = _gradient_names(op, returned)
    for inner in block.ops:
        inner.desc._set_int32_attr(ROLE_ATTR, BACKWARD_ROLE)
    block._set_forward_block_idx(forward_block.idx)
    _rename_within(block, renames)
    op.desc.set_blocks_attr("blocks", [forward_block.desc, block.desc])
    for grad in grads:
        parent._remove_var(grad.name, sync=False)


def _gradient_names(op: Any, returned: Any) -> Dict[str, str]:
    """Each variable backward returned, renamed to the gradient of the op's input in its place."""
    if returned is None:
        return {}
    flat = paddle.utils.flatten(returned)
    names = op.desc.input_arg_names()
    if len(names) != len(flat):
        raise AssertionError(
            "needs to keep the number of inputs to ``forward_fn`` the same as the number of outputs to "
            f"``backward_fn``, but got {len(names)} and {len(flat)}")
    return {var.name: name + core.grad_var_suffix() for var, name in zip(flat, names) if isinstance(var, Variable)}


def _rename_within(block: Any, renames: Dict[str, str]) -> None:
    """Rename as `static_pylayer`'s `_rename_var_recursively_` does (in the C++ description of
    `block` and the blocks its ops hold), then sync those blocks' Python side with it."""
    if not renames:
        return
    touched = [block, *blocks_within(block.program, block.ops, ("blocks", "sub_block"))]
    for current in touched:
        for old, new in renames.items():
            if current.has_var(old):
                current.desc._rename_var(old.encode(), new.encode())
            else:
                for inner in current.ops:
                    inner._rename_input(old, new)
                    inner._rename_output(old, new)
    for current in touched:
        current._sync_with_cpp()
