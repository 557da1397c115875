"""The runtime's entry points, on the real framework."""
import contextlib
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


def _static_program_adapter() -> type:
    """The adapter of the IR a static program is built in: PIR where the framework has it."""
    from pylayer2static_runtime import framework

    if framework.has_pir():
        from pylayer2static_runtime.pir.adapter import PirAdapter

        return PirAdapter
    from pylayer2static_runtime.legacy.adapter import LegacyAdapter

    return LegacyAdapter


def test_static_programs_leave_no_inplace_map_entries(transpile) -> None:
    """Converted code in a pure static program records its in-place writes in dy2static's map
    only while it is built: left behind, they outlive the program and a later program with
    the same id reads freed values (paddle 3.0.0-3.2.2 segfaults)."""
    module = harness.load_module(transpile(case("inplace_writes")), "e2e_runtime_inplace_writes")
    inplace = _static_program_adapter().inplace_map()
    before = {key: len(entries) for key, entries in inplace.params_dict.items()}
    harness.run_static(module, harness.reference_state(module))
    after = {key: len(entries) for key, entries in inplace.params_dict.items()}
    assert after == before


def test_a_failed_to_static_build_forgets_its_records(transpile) -> None:
    """dy2static records a program's parameters and in-place writes by id(program) and drops
    them when the build returns, not when it raises; left behind, the next program given the
    freed id inherits another layer's parameters (`jit.save` KeyError, paddle 2.6.2-3.3.1) or,
    under PIR, values of the freed program. A contract error must not poison later builds."""
    from pylayer2static_runtime import adapter as p2s_adapter, dy2static as p2s_dy2static

    module = harness.load_module(transpile(os.path.join(ERRORS_DIR, "autograd_backward.py")),
                                 "e2e_runtime_failed_build")
    owners = p2s_adapter.program_records()
    before = p2s_dy2static._recorded_keys(owners)
    with pytest.raises(p2s.PyLayerContractError):
        harness.run_to_static(module, harness.reference_state(module))
    assert p2s_dy2static._recorded_keys(owners) == before


@pytest.mark.parametrize("name", ["request_full", "nested_pylayer", "real_recompute_function", "aliasing"])
def test_the_executor_runs_a_static_program_without_pylayer_ops(transpile, monkeypatch, name) -> None:
    """The user's static program keeps its pylayer ops (a later `paddle.static.gradients`
    still sees backward's ops); the executor's copy holds their ops inlined, and on PIR no
    pipe."""
    from paddle.base import executor

    module = harness.load_module(transpile(case(name)), f"e2e_runtime_executor_{name}")
    programs = []
    if harness.PIR:
        make = executor._StandaloneExecutor

        def recording(place, plan, scope):
            programs.extend(plan.ir_program(job) for job in plan.job_types())
            return make(place, plan, scope)

        monkeypatch.setattr(executor, "_StandaloneExecutor", recording)
    else:
        add_feed_fetch_ops = executor._add_feed_fetch_ops

        def recording(*args, **kwargs):
            programs.append(add_feed_fetch_ops(*args, **kwargs))
            return programs[-1]

        monkeypatch.setattr(executor, "_add_feed_fetch_ops", recording)
    state = harness.reference_state(module)
    result = harness.run_static(module, state)
    harness.assert_same(result, harness.run_eager(module, state), tol=harness.tolerance(module))
    assert result.pylayer_ops >= 1
    if harness.PIR:
        programs = [p for p in programs if any(op.name() != "builtin.parameter" for op in p.global_block().ops)]
        pipes = [op.name() for p in programs for op in p.global_block().ops if op.name().startswith("cf.")]
        assert pipes == []
    assert programs and all(harness.count_pylayer_ops(p) == 0 for p in programs)


def test_pylayer_ops_holding_control_flow(transpile) -> None:
    """Forward and backward holding `if` and `while` (ops with blocks of their own). PIR: those
    ops move into the parent block whole, and no pylayer op is left. The legacy IR inlines
    exports at `normalize_program` and to_static programs (`legacy/inline.py`): there the ops move with
    their blocks, reparented to the global block, and the export equals eager."""
    import paddle
    from pylayer2static_runtime.pir import ops as pir_ops

    module = harness.load_module(transpile(case("control_flow")), "e2e_runtime_inline_control_flow")
    state = harness.reference_state(module)
    model = paddle.jit.to_static(harness._model(module, state), full_graph=True)
    model(*[paddle.to_tensor(a, stop_gradient=False) for a in harness.input_arrays(module)])
    program = model.forward.concrete_program.main_program
    before = harness.count_pylayer_ops(program)
    assert before >= 1
    if harness.PIR:
        program = program.clone()  # the model's own keeps its ops
        assert pir_ops.inline_pylayers(program) == before
        assert harness.count_pylayer_ops(program) == 0
    else:
        loaded, predicted = harness.run_jit_save(module, state)
        expected = harness.run_eager(module, state)
        harness.assert_same(loaded, expected, with_grads=False)
        assert predicted.pylayer_ops == 0


def _ops_of(program):
    """The global block's ops: type, inputs, outputs, attributes (the blocks they hold by id)
    but their creation stacks."""
    from paddle.base import core

    def attribute(op, name):
        kind = op.desc.attr_type(name)
        if kind == core.AttrType.BLOCK:
            return op._block_attr_id(name)
        return op._blocks_attr_ids(name) if kind == core.AttrType.BLOCKS else str(op.attr(name))

    return [(op.type, [(k, op.input(k)) for k in sorted(op.input_names)],
             [(k, op.output(k)) for k in sorted(op.output_names)],
             [(a, attribute(op, a)) for a in sorted(op.attr_names) if a != "op_callstack"])
            for op in program.global_block().ops]


@pytest.mark.parametrize("name, blocks_left_empty", [("several_pylayers", True), ("control_flow", False)])
def test_to_static_programs_convert_the_global_block_alone_once_inlined(
        transpile, monkeypatch, name, blocks_left_empty) -> None:
    """paddle 2.6.2's to_static makes the programs it runs from its whole program through
    `ir::Graph` conversions (`add_build_strategy_for`, the in-place pass), of every block while
    `FLAGS_convert_all_blocks` is on. Once the pylayer ops are inlined their blocks are left
    empty, and the runtime converts the global block alone (`legacy/hooks.py`): the programs
    made are the framework's op for op, in one block, the flag is back after, and training
    equals eager. Control flow the inlining keeps (blocks holding ops) keeps the framework's
    conversion. paddle 3.x's to_static makes PIR programs, with no such conversion."""
    import paddle
    from paddle.jit.dy2static import partial_program

    flags = []
    add_build_strategy_for = partial_program.add_build_strategy_for

    def recording(*args, **kwargs):
        flags.append(paddle.get_flags("FLAGS_convert_all_blocks")["FLAGS_convert_all_blocks"])
        return add_build_strategy_for(*args, **kwargs)

    monkeypatch.setattr(partial_program, "add_build_strategy_for", recording)
    module = harness.load_module(transpile(case(name)), f"e2e_runtime_global_block_{name}")
    state = harness.reference_state(module)
    harness.assert_same(harness.run_to_static(module, state), harness.run_eager(module, state),
                        tol=harness.tolerance(module))
    if harness.PIR:
        assert flags == []
        return
    assert flags == [not blocks_left_empty] * 2  # backward's program, then forward's
    assert paddle.get_flags("FLAGS_convert_all_blocks")["FLAGS_convert_all_blocks"] is True
    model = paddle.jit.to_static(harness._model(module, state), full_graph=True)
    harness._loss(model(*[paddle.to_tensor(a, stop_gradient=False) for a in harness.input_arrays(module)])).backward()
    _, (_, layer) = model.forward.program_cache.last()
    whole = layer._train_program
    end = layer.get_forward_end_op_idx(whole)
    made = layer._get_forward_backward_program_form(whole, end)
    framework = partial_program.PartialProgramLayer._get_forward_backward_program_form.__wrapped__(layer, whole, end)
    assert [_ops_of(p) for p in made] == [_ops_of(p) for p in framework]
    assert all(p.num_blocks == (1 if blocks_left_empty else whole.num_blocks) for p in made)
    assert all(p.num_blocks == whole.num_blocks > 1 for p in framework)


def _stacks_of(program):
    return [list(op.attr("op_callstack")) if op.has_attr("op_callstack") else None
            for block in program.blocks for op in block.ops]


def test_dy2static_leaves_the_stacks_of_the_runtimes_blocks_as_they_were_made(transpile) -> None:
    """dy2static maps the creation stack of every op of the program it built to the user's
    source (`update_op_callstack_with_origin_info`). The ops of the runtime's pylayer ops'
    blocks got theirs mapped as they were made, and the pass leaves those blocks
    (`legacy/hooks.py`): every stack is what the framework's own pass over every block gives,
    and a stack put in such a block afterwards, naming converted code, is not mapped while one
    in the global block is. paddle 3.x's to_static maps its PIR programs whole."""
    import paddle
    from paddle.jit.dy2static import program_translator
    from paddle.jit.dy2static.origin_info import global_origin_info_map
    from pylayer2static_runtime.legacy import hooks as legacy_hooks

    module = harness.load_module(transpile(case("several_pylayers")), "e2e_runtime_callstacks")
    state = harness.reference_state(module)
    model = paddle.jit.to_static(harness._model(module, state), full_graph=True)
    model(*[paddle.to_tensor(a, stop_gradient=False) for a in harness.input_arrays(module)])
    if harness.PIR:
        assert harness.count_pylayer_ops(model.forward.concrete_program.main_program) >= 1
        return
    program = model.forward.concrete_program.main_program
    ours = legacy_hooks._runtime_blocks(program)
    assert ours and all(block.ops for block in ours)
    with legacy_static_graph():
        mapped = program.clone()
    program_translator.update_op_callstack_with_origin_info.__wrapped__(mapped)
    assert _stacks_of(program) == _stacks_of(mapped)
    (path, line), origin = next(iter(global_origin_info_map.items()))
    converted = [f'  File "{path}", line {line}, in forward', "    x = y"]
    inner, outer = ours[0].ops[0], program.global_block().ops[0]
    for op in (inner, outer):
        op._set_attr("op_callstack", converted)
    program_translator.update_op_callstack_with_origin_info(program)
    assert inner.attr("op_callstack") == converted
    source, source_line, function, _ = origin.as_frame()
    assert outer.attr("op_callstack")[0] == f'  File "{source}", line {source_line}, in {function}'


def test_a_loaded_export_runs(transpile) -> None:
    """An export holds the PyLayers' forward ops inlined: inference after `jit.load` and in the
    predictor equals eager. Training a loaded export: test_train_after_load.py."""
    module = harness.load_module(transpile(case("real_fake_quant")), "e2e_runtime_loaded_training")
    state = harness.reference_state(module)
    loaded_result, predicted = harness.run_jit_save(module, state)
    harness.assert_same(loaded_result, harness.run_eager(module, state), with_grads=False)
    assert predicted.pylayer_ops == 0


@contextlib.contextmanager
def legacy_static_graph():
    """Static graph mode with the Program IR: paddle 2.6.2's, or 3.x's with PIR switched off."""
    import paddle

    paddle.enable_static()
    try:
        with paddle.pir_utils.OldIrGuard() if harness.PIR else contextlib.nullcontext():
            yield
    finally:
        paddle.disable_static()


def test_an_inlined_legacy_export_drops_only_the_copies_nothing_writes_around() -> None:
    """The legacy IR's pylayer op takes a copy of each input (`op_inputs`) and its forward
    block copies what it returns into the op's outputs; once an export is inlined,
    `legacy/inline.py` `_drop_copies` drops such a copy when neither it nor the original is written after
    it, and its readers read the original: the program computes the same. On a Program IR
    program built by hand (on paddle 3.x with PIR switched off, `pir_utils.OldIrGuard`); every
    case's export is compared with eager by test_cases.py's jit_save mode on paddle 2.6.2."""
    import numpy as np
    import paddle
    from pylayer2static_runtime.legacy import inline as legacy_inline

    with legacy_static_graph():
        main = paddle.static.Program()
        with paddle.static.program_guard(main, paddle.static.Program()):
            x = paddle.static.data("x", [2, 3], "float32")
            y = paddle.nn.functional.relu(x)
            dropped = paddle.assign(y)  # nothing writes y or the copy after it
            before_write = paddle.assign(x)  # x is written after it
            paddle.assign(x * 2.0, output=x)
            written = paddle.assign(y)  # the copy is written again
            paddle.assign(written * 5.0, output=written)
            not_a_copy = paddle.assign(y)  # made by the user, not by the op
            out = dropped * 1.0 + before_write + written + not_a_copy + x
        names = {"dropped": dropped.name, "before_write": before_write.name, "written": written.name}
        copies_made = [op.output("Out")[0] for op in main.global_block().ops if op.type == "assign"]
        exe = paddle.static.Executor(paddle.CPUPlace())
        feed = {"x": np.arange(6, dtype="float32").reshape(2, 3) - 2.0}
        expected = exe.run(main, feed=feed, fetch_list=[out])[0]
        assert len(legacy_inline._drop_copies(main, lambda op: op.output("Out")[0] in names.values())) == 1
        left = [op.output("Out")[0] for op in main.global_block().ops if op.type == "assign"]
        assert left == [name for name in copies_made if name != names["dropped"]]
        readers = [op for op in main.global_block().ops if op.type == "scale" and y.name in op.input_arg_names]
        assert readers, "the dropped copy's reader reads the original"
        np.testing.assert_array_equal(exe.run(main, feed=feed, fetch_list=[out])[0], expected)


def test_an_inlined_legacy_training_program_computes_what_its_pylayer_ops_did(monkeypatch) -> None:
    """`legacy_inline.inline_training` on a Program IR program built by hand with the
    framework's `static_pylayer` and `paddle.static.gradients`: backward's block declares a
    local under the global loss's name (its own in the op's scope: renamed, the loss is not
    overwritten) and returns no gradient for `y` (the op writes zeros: `fill_any_like`). The
    program runs no pylayer op after it, gives the same loss and gradients, and the index
    backward starts at moves by the ops forward gained. to_static training of every case on
    paddle 2.6.2 runs inlined too (test_cases.py's to_static and train modes)."""
    import numpy as np
    import paddle
    from paddle.base import executor
    from pylayer2static_runtime.legacy import inline as legacy_inline

    with legacy_static_graph():
        main = paddle.static.Program()
        with paddle.static.program_guard(main, paddle.static.Program()):
            x = paddle.static.data("x", [2, 3], "float32")
            y = paddle.static.data("y", [2, 3], "float32")
            x.stop_gradient = y.stop_gradient = False
            loss = main.global_block().create_var(name="loss", dtype="float32", shape=[])

            def backward_fn(dz):
                local = main.current_block().create_var(name="loss", dtype="float32", shape=[2, 3])
                paddle.assign(dz * 3.0, output=local)
                return local + 1.0, None

            z = paddle.static.nn.static_pylayer(lambda a, b: paddle.nn.functional.relu(a) * b, [x, y], backward_fn)
            paddle.assign(paddle.mean(z), output=loss)
            backward_start = len(main.global_block().ops) + 1  # after the loss gradient's fill
            grad_x, grad_y = paddle.static.gradients([loss], [x, y])
        feed = {"x": np.arange(6, dtype="float32").reshape(2, 3) - 2.0, "y": np.full((2, 3), 2.0, "float32")}
        fetch = [loss.name, grad_x.name, grad_y.name]
        with monkeypatch.context() as framework_only:  # the executor's copy keeps its pylayer ops
            framework_only.setattr(executor, "_add_feed_fetch_ops", executor._add_feed_fetch_ops.__wrapped__)
            expected = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=fetch)
        types = [op.type for op in main.global_block().ops]
        assert "pylayer_grad" in types
        moved = legacy_inline.inline_training(main, backward_start, set(fetch))
        types = [op.type for op in main.global_block().ops]
        assert "pylayer" not in types and "pylayer_grad" not in types
        assert types[moved - 1:moved + 1] == ["fill_any_like", "assign"]  # the loss gradient, then its assign_grad
        got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=fetch)
        for want, have in zip(expected, got):
            np.testing.assert_array_equal(have, want)
        assert not got[2].any()


def _legacy_pylayer_program(append_pylayer):
    """A Program IR program with one pylayer op built by `append_pylayer` (the framework's
    `static_pylayer`, or the runtime's `legacy/pylayer_op.py`): two inputs, two outputs, a
    backward that reads a gradient twice and returns a gradient for one input, and the
    gradients autodiff adds; (program, fetched names)."""
    import paddle

    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        x = paddle.static.data("x", [2, 3], "float32")
        y = paddle.static.data("y", [2, 3], "float32")
        x.stop_gradient = y.stop_gradient = False

        def forward(a, b):
            return [paddle.nn.functional.relu(a) * b, a + b]

        def backward(da, db):
            return da * 2.0 + db + da, None

        with paddle.static.name_scope("lora"), paddle.static.device_guard("cpu"):
            first, second = append_pylayer(forward, [x, y], backward)
        loss = paddle.mean(first) + paddle.mean(second * 3.0)
        grad_x, = paddle.static.gradients([loss], [x])
    return main, [loss.name, grad_x.name]


def test_the_legacy_pylayer_op_is_the_frameworks_op_for_op() -> None:
    """`legacy/pylayer_op.py` builds the op `static_pylayer` builds (paddle 2.6.2
    static_pylayer.py, also 3.x with PIR off), its copies bare `assign` descs: the same ops in
    each block, in order, with the same roles, name scopes and devices, the same structure of
    inputs, outputs and blocks, and the same loss and gradient when the program runs (through the op, not inlined:
    the executor's copy of the program keeps its pylayer ops here)."""
    import re

    import numpy as np
    import paddle
    from paddle.base import core, executor
    from pylayer2static_runtime.legacy import pylayer_op

    maker = core.op_proto_and_checker_maker
    attrs = (maker.kOpRoleAttrName(), maker.kOpNameScopeAttrName(), maker.kOpDeviceAttrName())

    def shape(program):
        blocks = []
        for block in program.blocks:
            ops = []
            for op in block.ops:
                ids = op._blocks_attr_ids("blocks") if op.has_attr("blocks") else []
                # a name scope entered again is made unique (`/lora/`, then `/lora_1/`)
                ops.append((op.type, [re.sub(r"_\d+/", "/", str(op.attr(name))) if op.has_attr(name) else None
                                      for name in attrs],
                            sorted((k, len(op.input(k))) for k in op.input_names),
                            sorted((k, len(op.output(k))) for k in op.output_names), ids))
            blocks.append((block.parent_idx, block.forward_block_idx, ops))
        return blocks

    feed = {"x": np.arange(6, dtype="float32").reshape(2, 3) - 2.0, "y": np.full((2, 3), 0.5, "float32")}
    results = []
    with legacy_static_graph():
        for build in (paddle.static.nn.static_pylayer, pylayer_op.append_pylayer):
            main, fetch = _legacy_pylayer_program(lambda f, i, b: build(f, i, b))
            original = executor._add_feed_fetch_ops
            executor._add_feed_fetch_ops = getattr(original, "__wrapped__", original)
            try:
                values = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=fetch)
            finally:
                executor._add_feed_fetch_ops = original
            assert "pylayer" in [op.type for op in main.global_block().ops]
            results.append((shape(main), values))
    (framework_shape, framework_values), (ours_shape, ours_values) = results
    assert ours_shape == framework_shape
    for want, have in zip(framework_values, ours_values):
        np.testing.assert_array_equal(have, want)


def test_an_inlined_legacy_export_names_every_class_on_one_op(monkeypatch) -> None:
    """`legacy_inline.inline_pylayers` on a Program IR program built by hand: a PyLayer whose
    forward returns its input (its block holds only the copy into the op's output) and one
    that computes. One op is left carrying `CLASS_ATTR`, naming both classes, so training a
    loaded 2.6.2 export is refused for either (`legacy._refusing_inlined_training`); the others
    carry none (an attribute per op cost 2.6.2's predictor some 2 %), and the program computes
    the same."""
    import numpy as np
    import paddle
    from paddle.base import executor
    from pylayer2static_runtime.legacy import inline as legacy_inline

    with legacy_static_graph():
        main = paddle.static.Program()
        with paddle.static.program_guard(main, paddle.static.Program()):
            x = paddle.static.data("x", [2, 3], "float32")
            passed = paddle.static.nn.static_pylayer(lambda v: v, [x], lambda d: d)
            computed = paddle.static.nn.static_pylayer(lambda v: paddle.nn.functional.relu(v) * 2.0, [passed],
                                                       lambda d: d)
            out = computed + 1.0
        pylayers = [op for op in main.global_block().ops if op.type == "pylayer"]
        for op, name in zip(pylayers, ("m.PassThrough", "m.Doubled")):
            op._set_attr(legacy_inline.CLASS_ATTR, name)
        feed = {"x": np.arange(6, dtype="float32").reshape(2, 3) - 2.0}
        with monkeypatch.context() as framework_only:  # the executor's copy keeps its pylayer ops
            framework_only.setattr(executor, "_add_feed_fetch_ops", executor._add_feed_fetch_ops.__wrapped__)
            expected = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[out])[0]
        assert legacy_inline.inline_pylayers(main, {out.name}) == 2
        ops = main.global_block().ops
        assert [op.type for op in ops if op.type == "pylayer"] == []
        assert legacy_inline.inlined_classes(ops) == ["m.Doubled", "m.PassThrough"]
        assert sum(op.has_attr(legacy_inline.CLASS_ATTR) for op in ops) == 1
        got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[out])[0]
        np.testing.assert_array_equal(got, expected)


def test_listing_a_to_static_programs_values_keeps_none_past_the_call(transpile) -> None:
    """A to_static program's values, listed (paddle 3.3.1 `RunnableProgram._get_program_all_values`,
    for its name map), go when the caller drops them: no reference cycle keeps them for the
    garbage collector. Kept, the keyword arguments among them (bound by reference) outlive their
    program and pybind11 hands them back for fresh values: the segfault in PIR autodiff of
    docs/RELIABILITY.md. The framework's own listing leaves a cycle; the runtime's lists the same
    values in the same order. Paddle 2.6.2's to_static has no such listing (nor PIR values):
    there is nothing to replace, which this checks."""
    import gc

    import paddle
    from paddle.jit.dy2static import pir_partial_program

    if not harness.PIR:
        assert not hasattr(pir_partial_program, "RunnableProgram")
        return
    RunnableProgram = pir_partial_program.RunnableProgram

    module = harness.load_module(transpile(case("saved_tensors")), "e2e_runtime_values_listing")
    state = harness.reference_state(module)
    model = paddle.jit.to_static(harness._model(module, state), full_graph=True)
    out = model(*[paddle.to_tensor(a, stop_gradient=False) for a in harness.input_arrays(module)])
    del out
    train = model.forward.get_concrete_program(
        *[paddle.to_tensor(a, stop_gradient=False) for a in harness.input_arrays(module)])[1].train_program
    program = train.backward_program
    assert program.global_block().kwargs(), "a backward program takes the values it reads as keyword arguments"
    expected = list(program.global_block().kwargs().values())
    for op in program.global_block().ops:
        expected.extend(op.results())
    for _ in range(10):  # finalizers run by one collection can leave garbage for the next
        if gc.collect() == 0:
            break
    gc.disable()
    try:
        values = RunnableProgram._get_program_all_values(program)
        assert len(values) >= len(expected)
        assert all(a.is_same(b) for a, b in zip(values, expected))
        del values
        assert gc.collect() == 0, "listing the values left a reference cycle holding them"
    finally:
        gc.enable()


STRAIGHT_LINE = '''
import paddle
import paddle.nn.functional as F


class Plain:
    @staticmethod
    def forward(ctx, x, weight, scale):
        y = paddle.matmul(x, weight) * scale
        ctx.save_for_backward(x, weight)
        ctx.scale = scale
        return F.silu(y).reshape([-1])


def shaped(ctx, x):
    return x.reshape([x.shape[0], -1])


def branching(ctx, x):
    if x.mean() > 0:
        return x
    return -x


def writing(ctx, buf, index, value):
    paddle.scatter_(buf, index, value)
    return buf


def storing(ctx, x):
    x[0] = 1.0
    return x


def assigning(ctx, x, y):
    paddle.assign(y, output=x)
    return x


def helped(ctx, x):
    return helper(x)


def recomputing(ctx, x):
    return ctx.run_function(x)


def logical(ctx, x, flag):
    return x * 2 if flag else x


def helper(x):
    return x


def closing(width):
    def shaped_in_closure(ctx, x, *, extra=2):
        return x.reshape([x.shape[0], width * extra]) * ctx.__scale
    return shaped_in_closure


class Private:
    @staticmethod
    def backward(ctx, dy, *, extra=2):
        return dy.reshape([dy.shape[0], -1]) * ctx.__scale * extra
'''


def test_straight_line_bodies_run_as_written_and_others_are_converted(tmp_path) -> None:
    """A body the conversion would not change (paddle APIs, tensor methods, ctx's own methods,
    no control flow, in-place writes or calls of user code) runs as written; one that also
    reads `x.shape` runs with those reads made as the conversion makes them (a dimension
    unknown when the graph is built is a tensor), compiled at the user's own lines; anything
    else is converted by dy2static, in a file of its own (`unconverted.py`)."""
    import paddle

    from pylayer2static_runtime.convert import _converted_without_decorators, static_function
    from pylayer2static_runtime.unconverted import plain_body
    from pylayer2static_runtime.written import WrittenFirst

    path = tmp_path / "bodies.py"
    path.write_text(STRAIGHT_LINE)
    module = harness.load_module(str(path), "e2e_runtime_bodies")
    assert plain_body(module.Plain.forward) is not None
    assert static_function(module.Plain.forward, "forward") is module.Plain.forward
    shaped = static_function(module.shaped, "shaped")
    assert shaped is not module.shaped
    assert (shaped.__code__.co_filename, shaped.__code__.co_firstlineno) == (str(path), module.shaped.__code__.co_firstlineno)
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
            x = paddle.static.data("x", [None, 3, 4], "float32")
            converted = _converted_without_decorators(module.shaped)(None, x)
            assert list(shaped(None, x).shape) == list(converted.shape) == [-1, -1]
            with pytest.raises(AssertionError, match="Only one dimension"):  # as written: reshape([-1, -1])
                module.shaped(None, x)
    finally:
        paddle.disable_static()
    # A closure's cells are read as they are when it runs, private names keep their mangling,
    # keyword-only defaults stay: as the function the user wrote.
    class Ctx:
        _Private__scale = 3.0

    closure = module.closing(2)
    made = static_function(closure, "shaped_in_closure")
    cells = dict(zip(made.__code__.co_freevars, made.__closure__))
    assert cells["width"] is closure.__closure__[closure.__code__.co_freevars.index("width")]
    assert made.__kwdefaults__ == {"extra": 2} and made.__code__.co_filename == str(path)
    private = static_function(module.Private.backward, "backward")
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
            x = paddle.static.data("x", [None, 4], "float32")
            expected = _converted_without_decorators(module.Private.backward)(Ctx(), x)
            assert list(private(Ctx(), x).shape) == list(expected.shape)
    finally:
        paddle.disable_static()
    converted = ["branching", "writing", "storing", "assigning", "helped", "recomputing", "logical"]
    for name in converted:
        fn = getattr(module, name)
        assert plain_body(fn) is None, name
        made = static_function(fn, name)
        if isinstance(made, WrittenFirst):  # built as written first; its converted form when refused
            made = made.converted()
        assert made is not fn and made.__code__.co_filename != str(path), name


def test_in_place_followers_are_installed_only_while_a_program_is_built(transpile) -> None:
    """The followers of the in-place APIs are installed once per build (dy2static's program,
    autodiff, one apply), not per body, and never outlive it; outside a body in a build,
    `zero_`, which static tensors lack, stays missing."""
    import paddle

    from pylayer2static_runtime import inplace as p2s_inplace

    module = harness.load_module(transpile(case("many_applies")), "e2e_runtime_followers")
    originals = {name: getattr(paddle, name) for name in ("scatter_", "assign")}
    installs = []
    real_swaps = p2s_inplace._swaps

    def counting_swaps():
        installs.append(1)
        return real_swaps()

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(p2s_inplace, "_swaps", counting_swaps)
        harness.run_to_static(module, harness.reference_state(module))
    assert 1 <= len(installs) <= 2, installs  # the forward program's build, then autodiff's
    assert {name: getattr(paddle, name) for name in originals} == originals
    with p2s_inplace.followers_installed(), pytest.raises(AttributeError, match="zero_"):
        p2s_inplace._zero_(object())
