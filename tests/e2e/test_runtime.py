"""The runtime's entry points, on the real framework."""
import os

import pytest
from paddle.jit.dy2static.convert_call_func import convert_call  # paddle 3.3.1 and 2.6.2

import harness
import pylayer2static_runtime as p2s
from conftest import CASES_DIR, HERE
from pylayer2static_runtime import op as p2s_op

ERRORS_DIR = os.path.join(HERE, "errors")


def case(name: str) -> str:
    return os.path.join(CASES_DIR, name + ".py")


def test_require_refuses_another_version() -> None:
    p2s.require(p2s.__version__)
    with pytest.raises(ImportError, match="pylayer2static_runtime==9.9.9"):
        p2s.require("9.9.9")


def test_entry_points_are_left_alone_by_convert_call(transpile) -> None:
    module = harness.load_module(transpile(case("generic_path")), "e2e_runtime_generic_path")
    assert convert_call(p2s.apply) is p2s.apply
    assert convert_call(module.double) is module.double


def test_to_static_goes_through_the_registered_builder(transpile, monkeypatch) -> None:
    module = harness.load_module(transpile(case("request_full")), "e2e_runtime_request_full")
    built = []
    real_build = p2s_op.PyLayerOp.build

    def counting_build(self, forward, backward):
        built.append(self.cls)
        return real_build(self, forward, backward)

    monkeypatch.setattr(p2s_op.PyLayerOp, "build", counting_build)
    harness.run_to_static(module, harness.reference_state(module))
    assert built == [module.cus_tanh]


def test_default_stands_for_forwards_own_default(transpile) -> None:
    module = harness.load_module(transpile(case("request_full")), "e2e_runtime_defaults")
    op = p2s.PyLayerOp(module.cus_tanh, (1.0, abs, p2s.DEFAULT), {})
    assert op.args[2] is module.cus_tanh.forward.__defaults__[0]
    assert repr(p2s.DEFAULT) == "pylayer2static_runtime.DEFAULT"


def test_static_programs_leave_no_inplace_map_entries(transpile) -> None:
    """Converted code in a pure static program records its in-place writes in dy2static's map
    only while it is built: left behind, they outlive the program and a later program with
    the same id reads freed values (paddle 3.0.0-3.2.2 segfaults)."""
    module = harness.load_module(transpile(case("inplace_writes")), "e2e_runtime_inplace_writes")
    inplace = p2s_op._inplace_map()
    before = {key: len(entries) for key, entries in inplace.params_dict.items()}
    harness.run_static(module, harness.reference_state(module))
    after = {key: len(entries) for key, entries in inplace.params_dict.items()}
    assert after == before


def test_a_failed_to_static_build_forgets_its_records(transpile) -> None:
    """dy2static records a program's parameters and in-place writes by id(program) and drops
    them when the build returns, not when it raises; left behind, the next program given the
    freed id inherits another layer's parameters (`jit.save` KeyError, paddle 2.6.2-3.3.1) or,
    under PIR, values of the freed program. A contract error must not poison later builds."""
    from pylayer2static_runtime import dy2static as p2s_dy2static

    module = harness.load_module(transpile(os.path.join(ERRORS_DIR, "autograd_backward.py")),
                                 "e2e_runtime_failed_build")
    owners = p2s_dy2static._program_records()
    before = p2s_dy2static._recorded_keys(owners)
    with pytest.raises(p2s.PyLayerContractError):
        harness.run_to_static(module, harness.reference_state(module))
    assert p2s_dy2static._recorded_keys(owners) == before


@pytest.mark.parametrize("name", ["request_full", "nested_pylayer", "real_recompute_function", "aliasing"])
def test_the_executor_runs_a_static_program_without_pylayer_ops(transpile, monkeypatch, name) -> None:
    """The user's static program keeps its pylayer ops (a later `paddle.static.gradients`
    still sees backward's ops); on PIR the executor's copy holds their ops inlined, and no
    pipe (paddle 2.6.2's executor runs the program as built)."""
    from paddle.base import executor

    module = harness.load_module(transpile(case(name)), f"e2e_runtime_executor_{name}")
    programs = []
    make = executor._StandaloneExecutor

    def recording(place, plan, scope):
        programs.extend(plan.ir_program(job) for job in plan.job_types())
        return make(place, plan, scope)

    if harness.PIR:
        monkeypatch.setattr(executor, "_StandaloneExecutor", recording)
    state = harness.reference_state(module)
    result = harness.run_static(module, state)
    harness.assert_same(result, harness.run_eager(module, state), tol=harness.tolerance(module))
    assert result.pylayer_ops >= 1
    if harness.PIR:
        ran = [p for p in programs if any(op.name() != "builtin.parameter" for op in p.global_block().ops)]
        assert ran and all(harness.count_pylayer_ops(p) == 0 for p in ran)
        pipes = [op.name() for p in ran for op in p.global_block().ops if op.name().startswith("cf.")]
        assert pipes == []


def test_pylayer_ops_holding_control_flow(transpile) -> None:
    """Forward and backward holding `if` and `while` (ops with blocks of their own). PIR: those
    ops move into the parent block whole, and no pylayer op is left. The legacy IR inlines
    exports only (`legacy.inline_pylayers` at `normalize_program`): there the ops move with
    their blocks, reparented to the global block, and the export equals eager."""
    import paddle
    from pylayer2static_runtime import inline

    module = harness.load_module(transpile(case("control_flow")), "e2e_runtime_inline_control_flow")
    state = harness.reference_state(module)
    model = paddle.jit.to_static(harness._model(module, state), full_graph=True)
    model(*[paddle.to_tensor(a, stop_gradient=False) for a in harness.input_arrays(module)])
    program = model.forward.concrete_program.main_program
    before = harness.count_pylayer_ops(program)
    assert before >= 1
    if harness.PIR:
        program = program.clone()  # the model's own keeps its ops
        assert inline.inline_pylayers(program) == before
        assert harness.count_pylayer_ops(program) == 0
    else:
        loaded, predicted = harness.run_jit_save(module, state)
        expected = harness.run_eager(module, state)
        harness.assert_same(loaded, expected, with_grads=False)
        assert predicted.pylayer_ops == 0


def test_a_loaded_export_runs(transpile) -> None:
    """An export holds the PyLayers' forward ops inlined: inference after `jit.load` and in the
    predictor equals eager. Training a loaded export: test_train_after_load.py."""
    module = harness.load_module(transpile(case("real_fake_quant")), "e2e_runtime_loaded_training")
    state = harness.reference_state(module)
    loaded_result, predicted = harness.run_jit_save(module, state)
    harness.assert_same(loaded_result, harness.run_eager(module, state), with_grads=False)
    assert predicted.pylayer_ops == 0


def _exported_assigns(module, state, prefix: str) -> int:
    """`assign` ops in the inference program `paddle.jit.save` writes for `module`."""
    import paddle

    model = harness._model(module, state)
    model.eval()
    paddle.jit.save(model, prefix, input_spec=harness._input_spec(module))
    paddle.enable_static()
    try:
        program, _, _ = paddle.static.load_inference_model(prefix, paddle.static.Executor(paddle.CPUPlace()))
        return sum(op.type == "assign" for block in program.blocks for op in block.ops)
    finally:
        paddle.disable_static()


@pytest.mark.skipif(harness.PIR, reason="a PIR export holds no copies (inline.py)")
@pytest.mark.parametrize("name", ["aliasing", "real_lora_quick", "inplace_writes"])
def test_a_legacy_export_drops_the_copies_it_does_not_need(transpile, monkeypatch, tmp_path, name) -> None:
    """The legacy IR's pylayer op takes a copy of each input (`op_inputs`) and its forward
    block copies what it returns into the op's outputs; an inlined export drops those copies
    (`legacy._drop_copies`), and loaded and predicted outputs still equal eager."""
    from pylayer2static_runtime import legacy

    module = harness.load_module(transpile(case(name)), f"e2e_runtime_copies_{name}")
    state = harness.reference_state(module)
    with monkeypatch.context() as kept:
        kept.setattr(legacy, "_drop_copies", lambda program, copies: 0)
        with_copies = _exported_assigns(module, state, str(tmp_path / "with_copies"))
    without = _exported_assigns(module, state, str(tmp_path / "without"))
    assert without < with_copies
    expected = harness.run_eager(module, state)
    for result in harness.run_jit_save(module, state):
        harness.assert_same(result, expected, with_grads=False, tol=harness.tolerance(module))
