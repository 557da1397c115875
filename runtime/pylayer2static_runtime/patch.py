"""Every framework patch the runtime makes: the table `PATCHES`, and the two ways to make one.

A patch replaces an attribute of PaddlePaddle, either for the whole process (`install`, once,
when the runtime is imported) or while a block runs (`swapped`: a PyLayer op being built, an
export being normalized), and is restored after it. Each call names its entry in `PATCHES`,
which says what is replaced, by which runtime module, and the framework file and versions the
behaviour it relies on was read from (the module's docstrings say why). A key not in the table
is refused (KeyError), so this table lists them all (tests/e2e/test_call_layout.py checks that
every key is used, and every use listed).
"""
import contextlib
import inspect
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Tuple


class Patch(NamedTuple):
    """One framework attribute the runtime replaces."""

    target: str  # the attribute replaced
    module: str  # the runtime module that replaces it
    scope: str  # "process": installed once at import; "build": swapped while a block runs
    read_from: str  # the framework file(s) and versions its behaviour was read from


_BOTH = "paddle 3.3.1 and 2.6.2"

PATCHES: Dict[str, Patch] = {
    # install.py installs these once, from the package's __init__ (process-wide).
    "pir.hooks.ir_backward.grad": Patch(
        "paddle.autograd.ir_backward.grad", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/autograd/ir_backward.py `grad`, python/paddle/optimizer/optimizer.py"),
    "pir.hooks.ir_backward.append_backward": Patch(
        "paddle.autograd.ir_backward.append_backward", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/autograd/ir_backward.py `append_backward`, optimizer.py "
        "`_pir_create_optimization_pass`"),
    "pir.hooks.RunnableProgram._get_program_all_values": Patch(
        "paddle.jit.dy2static.pir_partial_program.RunnableProgram._get_program_all_values", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/jit/dy2static/pir_partial_program.py, paddle/fluid/pybind/pir.cc "
        "(`Block.kwargs` bound by reference)"),
    "recompute.fleet.recompute.recompute": Patch(
        "paddle.distributed.fleet.recompute.recompute.recompute", "recompute.py", "process",
        f"{_BOTH} python/paddle/distributed/fleet/recompute/recompute.py `recompute`, `recompute_sequential`"),
    "recompute.fleet.recompute": Patch(
        "paddle.distributed.fleet.recompute.recompute", "recompute.py", "process",
        f"{_BOTH} python/paddle/distributed/fleet/recompute/__init__.py, fleet/utils/__init__.py `recompute`"),
    "recompute.fleet.recompute.recompute_sequential": Patch(
        "paddle.distributed.fleet.recompute.recompute.recompute_sequential", "recompute.py", "process",
        f"{_BOTH} python/paddle/distributed/fleet/recompute/recompute.py `recompute_sequential`"),
    "recompute.fleet.recompute_sequential": Patch(
        "paddle.distributed.fleet.recompute.recompute_sequential", "recompute.py", "process",
        f"{_BOTH} python/paddle/distributed/fleet/recompute/__init__.py"),
    "recompute.incubate.fleet.recompute_sequential": Patch(
        "paddle.incubate.distributed.fleet.recompute_sequential", "recompute.py", "process",
        f"{_BOTH} python/paddle/incubate/distributed/fleet/__init__.py"),
    "recompute.incubate.fleet.recompute": Patch(
        "paddle.incubate.distributed.fleet.recompute", "recompute.py", "process",
        f"{_BOTH} python/paddle/incubate/distributed/fleet/__init__.py"),
    "paddle_layers.ScatterOp.apply": Patch(
        "paddle.distributed.fleet.utils.sequence_parallel_utils.ScatterOp.apply", "paddle_layers.py", "process",
        f"{_BOTH} python/paddle/distributed/fleet/utils/sequence_parallel_utils.py, autograd/py_layer.py"),
    "paddle_layers.GatherOp.apply": Patch(
        "paddle.distributed.fleet.utils.sequence_parallel_utils.GatherOp.apply", "paddle_layers.py", "process",
        f"{_BOTH} python/paddle/distributed/fleet/utils/sequence_parallel_utils.py, autograd/py_layer.py"),
    "paddle_layers.AllGatherOp.apply": Patch(
        "paddle.distributed.fleet.utils.sequence_parallel_utils.AllGatherOp.apply", "paddle_layers.py", "process",
        f"{_BOTH} python/paddle/distributed/fleet/utils/sequence_parallel_utils.py, autograd/py_layer.py"),
    "paddle_layers.ReduceScatterOp.apply": Patch(
        "paddle.distributed.fleet.utils.sequence_parallel_utils.ReduceScatterOp.apply", "paddle_layers.py", "process",
        f"{_BOTH} python/paddle/distributed/fleet/utils/sequence_parallel_utils.py, autograd/py_layer.py"),
    "paddle_layers.StaticPyLayer.apply": Patch(
        "paddle.jit.dy2static.py_layer.StaticPyLayer.apply", "paddle_layers.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/py_layer.py, convert_operators.py `convert_load`"),
    "legacy.hooks.io.normalize_program": Patch(
        "paddle.static.io.normalize_program", "legacy/hooks.py", "process",
        f"{_BOTH} python/paddle/static/io.py `normalize_program`"),
    "legacy.hooks.PartialProgramLayer.__init__": Patch(
        "paddle.jit.dy2static.partial_program.PartialProgramLayer.__init__", "legacy/hooks.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/partial_program.py (to_static's forward program, legacy IR)"),
    "legacy.hooks.PartialProgramLayer.set_hooker": Patch(
        "paddle.jit.dy2static.partial_program.PartialProgramLayer.set_hooker", "legacy/hooks.py", "process",
        "paddle 2.6.2 python/paddle/jit/dy2static/partial_program.py, program_translator.py `PrimHooker`"),
    "legacy.hooks.PartialProgramLayer._get_forward_backward_program_form": Patch(
        "paddle.jit.dy2static.partial_program.PartialProgramLayer._get_forward_backward_program_form",
        "legacy/hooks.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/partial_program.py `add_build_strategy_for`, "
        "`_apply_inplace_pass`; paddle/fluid/framework/ir/graph.cc (`FLAGS_convert_all_blocks`)"),
    "legacy.hooks.PartialProgramLayer._build_infer_program": Patch(
        "paddle.jit.dy2static.partial_program.PartialProgramLayer._build_infer_program", "legacy/hooks.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/partial_program.py `add_build_strategy_for`, "
        "`_apply_inplace_pass`; paddle/fluid/framework/ir/graph.cc (`FLAGS_convert_all_blocks`)"),
    "legacy.hooks.update_op_callstack_with_origin_info": Patch(
        "paddle.jit.dy2static.program_translator.update_op_callstack_with_origin_info", "legacy/hooks.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/origin_info.py, program_translator.py `ConcreteProgram.from_func_spec`"),
    "legacy.hooks.executor._add_feed_fetch_ops": Patch(
        "paddle.base.executor._add_feed_fetch_ops", "legacy/hooks.py", "process",
        f"{_BOTH} python/paddle/base/executor.py `_get_program_and_executor` (Program IR programs)"),
    "pir.collectives.all_gather_in_static_mode": Patch(
        "paddle.distributed.communication.stream.all_gather._all_gather_in_static_mode", "pir/collectives.py", "process",
        "paddle 3.3.1 python/paddle/distributed/communication/stream/all_gather.py"),
    "pir.collectives.all_to_all_in_static_mode": Patch(
        "paddle.distributed.communication.stream.all_to_all._all_to_all_in_static_mode", "pir/collectives.py", "process",
        "paddle 3.3.1 python/paddle/distributed/communication/stream/all_to_all.py"),
    "pir.collectives.stream.all_reduce": Patch(
        "paddle.distributed.communication.stream.all_reduce", "pir/collectives.py", "process",
        f"{_BOTH} python/paddle/distributed/communication/stream/all_reduce.py"),
    "pir.collectives.stream.all_gather": Patch(
        "paddle.distributed.communication.stream.all_gather", "pir/collectives.py", "process",
        f"{_BOTH} python/paddle/distributed/communication/stream/all_gather.py"),
    "pir.collectives.stream.alltoall": Patch(
        "paddle.distributed.communication.stream.alltoall", "pir/collectives.py", "process",
        f"{_BOTH} python/paddle/distributed/communication/stream/all_to_all.py"),
    "dy2static.from_func_spec": Patch(
        "paddle.jit.dy2static.program_translator.ConcreteProgram.from_func_spec", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/program_translator.py"),
    "dy2static.pir_from_func_spec": Patch(
        "paddle.jit.dy2static.program_translator.ConcreteProgram.pir_from_func_spec", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/program_translator.py"),
    "dy2static.followers.from_func_spec": Patch(
        "paddle.jit.dy2static.program_translator.ConcreteProgram.from_func_spec", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/program_translator.py"),
    "dy2static.followers.pir_from_func_spec": Patch(
        "paddle.jit.dy2static.program_translator.ConcreteProgram.pir_from_func_spec", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/program_translator.py"),
    "dy2static.shape_targets": Patch(
        "TensorShapeTransformer.visit_Attribute", "dy2static.py", "process",
        "paddle 3.3.1 python/paddle/jit/dy2static/transformers/tensor_shape_transformer.py, "
        "2.6.2 python/paddle/jit/dy2static/tensor_shape_transformer.py"),
    "dy2static.StaticPyLayer.__getattr__": Patch(
        "paddle.jit.dy2static.py_layer.StaticPyLayer.__getattr__", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/py_layer.py, convert_operators.py `convert_load`"),
    "dy2static.StaticPyLayer.__setattr__": Patch(
        "paddle.jit.dy2static.py_layer.StaticPyLayer.__setattr__", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/py_layer.py, convert_operators.py `convert_load`"),
    "dy2static.StaticPyLayer.__delattr__": Patch(
        "paddle.jit.dy2static.py_layer.StaticPyLayer.__delattr__", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/py_layer.py, convert_operators.py `convert_load`"),
    "dy2static.StaticPyLayer.__init__": Patch(
        "paddle.jit.dy2static.py_layer.StaticPyLayer.__init__", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/py_layer.py"),
    "dy2static.StaticPyLayer.apply": Patch(
        "paddle.jit.dy2static.py_layer.StaticPyLayer.apply", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/py_layer.py"),
    "dy2static.StaticPyLayer.__mro_entries__": Patch(
        "paddle.jit.dy2static.py_layer.StaticPyLayer.__mro_entries__", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/py_layer.py"),
    "dy2static.is_unsupported": Patch(
        "paddle.jit.dy2static.convert_call_func.is_unsupported", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/convert_call_func.py `is_unsupported`, `convert_call`; "
        "utils.py `is_paddle_func`"),
    "dy2static.FunctionCache._convert": Patch(
        "paddle.jit.dy2static.program_translator.FunctionCache._convert", "dy2static.py", "process",
        f"{_BOTH} python/paddle/jit/dy2static/program_translator.py; paddle 3.0.0-3.1.1 utils.py `ast_to_func`"),
    "sot.MethodVariable.guard": Patch(
        "paddle.jit.sot.opcode_translator.executor.variables.callable.MethodVariable.make_stringified_guard",
        "sot.py", "process", "paddle 3.3.1 python/paddle/jit/sot/opcode_translator/executor/variables/callable.py"),
    "sot.PartialVariable.guard": Patch(
        "paddle.jit.sot.opcode_translator.executor.variables.callable.PartialVariable.make_stringified_guard",
        "sot.py", "process", "paddle 3.3.1 python/paddle/jit/sot/opcode_translator/executor/guard.py"),
    "sot.InferMetaCache.key_fn": Patch(
        "paddle.jit.sot.infer_meta.InferMetaCache.key_fn", "sot.py", "process",
        "paddle 3.3.1 python/paddle/jit/sot/infer_meta.py, utils/utils.py `Cache`, "
        "opcode_translator/executor/side_effects.py"),
    "sot.VariableFactory.from_value": Patch(
        "paddle.jit.sot.opcode_translator.executor.variables.base.VariableFactory.from_value", "sot.py", "process",
        "paddle 3.3.1 python/paddle/jit/sot/opcode_translator/executor/variables/base.py, variables/basic.py "
        "`ParameterVariable`, symbolic/statement_ir.py `ParametersHolder`"),
    "sot.compile_cache.compile_sir": Patch(
        "paddle.jit.sot.symbolic.compile_cache.compile_sir", "sot.py", "process",
        "paddle 3.3.1 python/paddle/jit/sot/symbolic/compile_cache.py, interpreter.py `compile_sir`, `prepare_state`"),
    "pir.hooks.PartialProgramLayer._append_backward": Patch(
        "paddle.jit.dy2static.pir_partial_program.PartialProgramLayer._append_backward", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/jit/dy2static/pir_partial_program.py (`_append_backward_desc` in 3.0.0)"),
    "pir.hooks.PartialProgramLayer.__init__": Patch(
        "paddle.jit.dy2static.pir_partial_program.PartialProgramLayer.__init__", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/jit/dy2static/pir_partial_program.py (`PartialProgramLayerHook`)"),
    "pir.hooks.core.call_vjp": Patch(
        "paddle.base.core.call_vjp", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/autograd/ir_backward.py (double backward through a pylayer op)"),
    "pir.hooks.executor._add_pir_fetch_ops": Patch(
        "paddle.base.executor._add_pir_fetch_ops", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/base/executor.py"),
    "pir.hooks.pir_io.normalize_pir_program": Patch(
        "paddle.static.pir_io.normalize_pir_program", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/static/pir_io.py"),
    "pir.hooks.io.normalize_pir_program": Patch(
        "paddle.static.io.normalize_pir_program", "pir/hooks.py", "process",
        "paddle 3.3.1 python/paddle/static/io.py (imports it from pir_io)"),
    # Swapped while a PyLayer op (or an export) is built, and restored after.
    "body.in_to_static_mode": Patch(
        "paddle.base.dygraph.base.global_var._in_to_static_mode_", "body.py", "build",
        f"{_BOTH} python/paddle/base/dygraph/base.py; 3.3.1 convert_operators.py `convert_load`"),
    "body.is_grad_enabled": Patch(
        "paddle.base.dygraph.base.is_grad_enabled", "body.py", "build",
        f"{_BOTH} python/paddle/base/dygraph/base.py"),
    "body.set_grad_enabled": Patch(
        "paddle.base.dygraph.base._set_grad_enabled", "body.py", "build",
        f"{_BOTH} python/paddle/base/dygraph/base.py"),
    "body.autograd_backward": Patch(
        "paddle.autograd.backward", "body.py", "build",
        f"{_BOTH} python/paddle/autograd/backward_mode.py"),
    "pir.adapter.Value.detach": Patch(
        "paddle.pir.Value.detach", "pir/adapter.py", "build",
        "paddle 3.3.1 python/paddle/pir/math_op_patch.py, paddle/fluid/pybind/pir.cc"),
    "pir.adapter.parameter_recorder.get": Patch(
        "paddle.jit.dy2static.parameter_recorder.ParametersRecorder.get (the recorder's)", "pir/adapter.py", "build",
        "paddle 3.3.1 python/paddle/jit/dy2static/parameter_recorder.py, pir_partial_program.py `_append_backward`"),
    "written.refusals": Patch(
        "the static value classes' `__bool__`, `__index__`, `__int__`, `__float__`, `__complex__`, `__len__`, "
        "`__iter__`, `__setitem__`, `__str__`, `__repr__`, `__format__`; paddle.base.framework.Program._create_block; "
        "builtins.print",
        "written.py", "build",
        f"{_BOTH} python/paddle/pir/math_op_patch.py, base/layers/math_op_patch.py, jit/dy2static/transformers/ "
        "(what the conversion rewrites), base/framework.py `Program._create_block`"),
    "sot.parameter_recorder.get": Patch(
        "paddle.jit.dy2static.parameter_recorder.ParametersRecorder.get (the recorder's)", "sot.py", "build",
        "paddle 3.3.1 python/paddle/jit/dy2static/parameter_recorder.py, jit/sot/infer_meta.py"),
    "legacy.adapter.Block.append_op": Patch(
        "paddle.base.framework.Block.append_op", "legacy/adapter.py", "build",
        f"{_BOTH} python/paddle/base/framework.py `Block.append_op` (`pass_stop_gradient`)"),
    "legacy.adapter.framework.traceback": Patch(
        "paddle.base.framework.traceback (the module `Operator` records call stacks with)", "legacy/adapter.py",
        "build", f"{_BOTH} python/paddle/base/framework.py `Operator.__init__` (`op_callstack`)"),
    "legacy.adapter.Program._sync_with_cpp": Patch(
        "paddle.base.framework.Program._sync_with_cpp (of the program being built)", "legacy/adapter.py", "build",
        "paddle 2.6.2 python/paddle/static/nn/static_pylayer.py, python/paddle/base/framework.py"),
    "legacy.adapter.Block._sync_with_cpp": Patch(
        "paddle.base.framework.Block._sync_with_cpp (of the blocks before the op's)", "legacy/adapter.py", "build",
        "paddle 2.6.2 python/paddle/static/nn/static_pylayer.py, python/paddle/base/framework.py `Block._remove_var`"),
    "legacy.adapter.Variable.clone": Patch(
        "paddle.base.framework.Variable.clone", "legacy/adapter.py", "build",
        "paddle 2.6.2 python/paddle/base/framework.py, variable_index.py"),
    "legacy.adapter.Variable.detach": Patch(
        "paddle.base.framework.Variable.detach", "legacy/adapter.py", "build",
        "paddle 2.6.2 python/paddle/base/framework.py"),
    "legacy.adapter.Variable.T": Patch(
        "paddle.base.framework.Variable.T", "legacy/adapter.py", "build",
        "paddle 2.6.2 python/paddle/base/framework.py"),
    "legacy.adapter.Variable.size": Patch(
        "paddle.base.framework.Variable.size", "legacy/adapter.py", "build",
        "paddle 2.6.2 python/paddle/base/framework.py"),
    "legacy.adapter.is_view_var": Patch(
        "Variable.is_view_var of the views an in-place API reads (not the one it writes)", "legacy/adapter.py",
        "build", "paddle 2.6.2 python/paddle/utils/inplace_utils.py, base/framework.py `record_is_view_var`"),
    "legacy.hooks.refuse_double_backward": Patch(
        "paddle.base.backward._append_backward_ops_", "legacy/hooks.py", "process",
        "paddle 2.6.2 python/paddle/base/backward.py, paddle/fluid/operators/pylayer_op.cc"),
    "legacy.hooks.refuse_inlined_training": Patch(
        "paddle.jit.translated_layer._ProgramHolder._append_backward_desc", "legacy/hooks.py", "process",
        "paddle 2.6.2 python/paddle/jit/translated_layer.py"),
    "pir.export.save_inference_model_pir": Patch(
        "paddle.static.pir_io.save_inference_model_pir", "pir/export.py", "process",
        "paddle 3.3.1 python/paddle/static/pir_io.py"),
    "pir.export.io.save_inference_model_pir": Patch(
        "paddle.static.io.save_inference_model_pir", "pir/export.py", "process",
        "paddle 3.3.1 python/paddle/static/io.py (imports it from pir_io)"),
    "pir.export.load_pir_program": Patch(
        "paddle.jit.pir_translated_layer._load_pir_program", "pir/export.py", "process",
        "paddle 3.3.1 python/paddle/jit/pir_translated_layer.py"),
    "legacy.hooks.Program.clone": Patch(
        "paddle.static.Program.clone (while normalize_program runs)", "legacy/hooks.py", "build",
        f"{_BOTH} python/paddle/static/io.py `normalize_program`"),
    "legacy.hooks.Program.blocks": Patch(
        "Program.blocks of the program dy2static maps the stacks of (while it runs)", "legacy/hooks.py", "build",
        f"{_BOTH} python/paddle/jit/dy2static/origin_info.py `update_op_callstack_with_origin_info`"),
    "inplace.apis": Patch(
        "every in-place API NAME_ of paddle, paddle.tensor, paddle.nn.functional and the static tensor "
        "types, their `zero_`, and paddle.assign", "inplace.py", "build",
        "paddle 3.3.1 and 2.6.2 python/paddle/tensor/*.py, python/paddle/utils/inplace_utils.py"),
    "inplace.warnings": Patch(
        "paddle.utils.inplace_utils.warnings", "inplace.py", "build",
        f"{_BOTH} python/paddle/utils/inplace_utils.py"),
    "eager_only.Tensor": Patch(
        "paddle.Tensor", "eager_only.py", "build", f"{_BOTH} python/paddle/__init__.py"),
    "eager_only.dygraph_tracer": Patch(
        "paddle.base.framework._dygraph_tracer (and paddle.framework's)", "eager_only.py", "build",
        f"{_BOTH} python/paddle/base/framework.py"),
    "eager_only.missing_attribute": Patch(
        "__getattr__ of the static tensor types (they have none)", "eager_only.py", "build",
        "paddle 3.3.1 python/paddle/pir/math_op_patch.py, paddle/fluid/pybind/pir.cc; 2.6.2 python/paddle/base/"
        "framework.py; both jit/dy2static/transformers/ifelse_transformer.py (`.numpy()` calls dropped)"),
    "eager_only.no_data": Patch(
        "numpy, item and tolist of the static tensor types", "eager_only.py", "build",
        "paddle 3.3.1 python/paddle/pir/math_op_patch.py, 2.6.2 python/paddle/base/framework.py"),
}

_MARK = "_p2s_patch"
_ABSENT = object()


def _listed(key: str) -> Patch:
    patch = PATCHES.get(key)
    if patch is None:
        raise KeyError(f"pylayer2static_runtime: framework patch '{key}' is not listed in patch.PATCHES")
    return patch


def install(key: str, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
    """For the whole process: `owner.name` becomes `make(current)` (`current`: None where
    the framework has no such attribute), once; a second call finds it installed.

    A static method stays one (`make` gets and gives the function).
    """
    _listed(key)
    static = isinstance(inspect.getattr_static(owner, name, None), staticmethod)
    current = getattr(owner, name, None)
    if getattr(current, _MARK, None) == key:
        return
    replacement = make(current)
    setattr(replacement, _MARK, key)
    setattr(owner, name, staticmethod(replacement) if static else replacement)


def _own(owner: Any, name: str) -> Any:
    """`owner.name` as `owner` itself holds it (`_ABSENT` when inherited or missing: restored
    as such, inherited again), or as read where `owner` has no `__dict__`."""
    try:
        return vars(owner).get(name, _ABSENT)
    except TypeError:
        return getattr(owner, name)


def _restore(owner: Any, name: str, previous: Any) -> None:
    if previous is _ABSENT:
        delattr(owner, name)
    else:
        setattr(owner, name, previous)


@contextlib.contextmanager
def swapped(key: str, owner: Any, name: str, value: Any) -> Iterator[None]:
    """`owner.name` is `value` inside the block and what it was after it, however it ends
    (absent again if it was absent)."""
    _listed(key)
    previous = _own(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        _restore(owner, name, previous)


@contextlib.contextmanager
def swapped_all(key: str, swaps: Iterable[Tuple[Any, str, Any]]) -> Iterator[None]:
    """`swapped` for each `(owner, name, value)` of `swaps`, in one flat loop rather than a
    context manager each (a body built swaps some 430 in-place APIs)."""
    _listed(key)
    previous: List[Tuple[Any, str, Any]] = []
    try:
        for owner, name, value in swaps:
            previous.append((owner, name, _own(owner, name)))
            setattr(owner, name, value)
        yield
    finally:
        for owner, name, value in reversed(previous):
            _restore(owner, name, value)
