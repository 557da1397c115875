"""Run one e2e case (a small model using PyLayer) eagerly and in each static mode.

A case is a Python file defining `Model` (a `paddle.nn.Layer`) and `INPUTS`, a list
of `(shape, dtype, requires_grad)`; optional `STEPS` (SGD steps for the `train`
mode, default 3) and `MODES_2_6` (the modes it runs in on paddle 2.6, default all).
Every mode returns a `Result` that the tests compare with the original module
run eagerly: forward outputs (tensor leaves), gradients of a fixed loss with
respect to the inputs that require them and to the parameters, and how many
`pylayer` ops the static program holds.
"""
import importlib.util
import os
import re
import sys
import tempfile
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import paddle

MODES = ("eager", "to_static", "sot", "static", "jit_save", "train")


class Result(NamedTuple):
    outputs: List[np.ndarray]
    grads: Dict[str, Optional[np.ndarray]]
    pylayer_ops: int = 0
    run_pylayer_ops: Optional[int] = None  # in the programs the executor ran (to_static)


PIR = paddle.framework.use_pir_api() if hasattr(paddle.framework, "use_pir_api") else False


def load_module(path: str, name: str) -> Any:
    """Import the Python file at `path` as module `name` (kept in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def case_modes(module: Any) -> Sequence[str]:
    """The modes a case runs in: all, or on paddle 2.6 its `MODES_2_6` when it has one
    (each such case says which 2.6.2 framework bug rules the others out)."""
    if paddle.__version__.startswith("2.6"):
        return getattr(module, "MODES_2_6", MODES)
    return MODES


def input_arrays(module: Any, seed: int = 0) -> List[np.ndarray]:
    rng = np.random.RandomState(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape, dtype, _ in module.INPUTS]


def reference_state(module: Any) -> Dict[str, np.ndarray]:
    """Parameters of a freshly built model of the original module (seeded)."""
    paddle.seed(0)
    return {k: v.numpy() for k, v in module.Model().state_dict().items()}


def _leaves(obj: Any) -> List[Any]:
    if isinstance(obj, (list, tuple)):
        return [leaf for item in obj for leaf in _leaves(item)]
    if isinstance(obj, dict):
        return [leaf for key in obj for leaf in _leaves(obj[key])]
    return [obj]


def _tensor_leaves(obj: Any) -> List[Any]:
    kinds = [paddle.Tensor, paddle.static.Variable]
    if hasattr(paddle, "pir") and hasattr(paddle.pir, "Value"):
        kinds.append(paddle.pir.Value)
    return [leaf for leaf in _leaves(obj) if isinstance(leaf, tuple(kinds))]


def _loss(outputs: Any) -> Any:
    """A loss that weighs every floating output differently: sum_i (i+1) * mean(out_i)."""
    total = None
    for i, out in enumerate(_tensor_leaves(outputs)):
        if not paddle.is_floating_point(out) or out.stop_gradient:
            continue
        term = paddle.mean(out) * float(i + 1)
        total = term if total is None else total + term
    return total


def _model(module: Any, state: Dict[str, np.ndarray]) -> paddle.nn.Layer:
    paddle.seed(0)
    model = module.Model()
    model.set_state_dict({k: paddle.to_tensor(v) for k, v in state.items()})
    return model


def _dynamic(module: Any, state: Dict[str, np.ndarray], wrap: Callable[[Any], Any]) -> Result:
    model = _model(module, state)
    fn = wrap(model)
    inputs = []
    for array, (_, _, needs_grad) in zip(input_arrays(module), module.INPUTS):
        tensor = paddle.to_tensor(array)
        tensor.stop_gradient = not needs_grad
        inputs.append(tensor)
    outputs = fn(*inputs)
    loss = _loss(outputs)
    if loss is not None:
        loss.backward()
    grads: Dict[str, Optional[np.ndarray]] = {}
    for i, tensor in enumerate(inputs):
        if not tensor.stop_gradient:
            grads[f"x{i}"] = None if tensor.grad is None else tensor.grad.numpy()
    for name, param in model.named_parameters():
        grads[name] = None if param.grad is None else param.grad.numpy()
    return Result([t.numpy() for t in _tensor_leaves(outputs)], grads)


def count_pylayer_ops(program: Any) -> int:
    """Number of pylayer ops in a PIR or legacy program: in its global block and the blocks its
    ops hold, at any depth (a legacy block no op holds any more is not run)."""
    count = 0
    if not isinstance(program, paddle.pir.Program):  # legacy Program
        stack = [program.global_block()]
        while stack:
            block = stack.pop()
            for op in block.ops:
                count += op.type == "pylayer"
                for name in op.attr_names:
                    if op.attr_type(name) == paddle.base.core.AttrType.BLOCK:
                        stack.append(program.block(op._block_attr_id(name)))
                    elif op.attr_type(name) == paddle.base.core.AttrType.BLOCKS:
                        stack.extend(program.block(i) for i in op._blocks_attr_ids(name))
        return count
    stack = [program.global_block()]
    while stack:
        block = stack.pop()
        for op in block.ops:
            if op.name() == "pd_op.pylayer":
                count += 1
            for region in op.regions() if hasattr(op, "regions") else []:
                stack.extend(region.blocks())
    return count


def run_eager(module: Any, state: Dict[str, np.ndarray]) -> Result:
    return _dynamic(module, state, lambda model: model)


def run_to_static(module: Any, state: Dict[str, np.ndarray]) -> Result:
    holder: Dict[str, Any] = {}

    def wrap(model: Any) -> Any:
        holder["fn"] = paddle.jit.to_static(model, full_graph=True)
        return holder["fn"]

    result = _dynamic(module, state, wrap)
    program = holder["fn"].forward.concrete_program.main_program
    return result._replace(pylayer_ops=count_pylayer_ops(program), run_pylayer_ops=_run_pylayer_ops(holder["fn"]))


def _run_pylayer_ops(model: Any) -> int:
    """pylayer ops in the forward and backward programs the executor ran for a to_static
    model's last call (paddle 3.3.1 `PartialProgramLayer.train_program`'s, 2.6.2 the layer's)."""
    _, (_, layer) = model.forward.program_cache.last()
    ran = layer.train_program if PIR else layer
    return count_pylayer_ops(ran.forward_program) + count_pylayer_ops(ran.backward_program)


def run_eval(module: Any, state: Dict[str, np.ndarray], to_static: bool) -> Result:
    """The model in eval mode (`model.eval()`, under `paddle.no_grad`), eagerly or under
    `paddle.jit.to_static(full_graph=True)`: its outputs, and for to_static the pylayer ops of
    the program run (2.6.2: the layer's eval program, a clone for test of the forward one)."""
    model = _model(module, state)
    model.eval()
    fn = paddle.jit.to_static(model, full_graph=True) if to_static else model
    with paddle.no_grad():
        outputs = fn(*[paddle.to_tensor(array) for array in input_arrays(module)])
    result = Result([t.numpy() for t in _tensor_leaves(outputs)], {})
    if not to_static:
        return result
    _, (_, layer) = fn.forward.program_cache.last()
    ran = layer.infer_program.program if PIR else layer.infer_program
    return result._replace(run_pylayer_ops=count_pylayer_ops(ran))


def run_sot(module: Any, state: Dict[str, np.ndarray]) -> Result:
    """`paddle.jit.to_static` with the framework's default (bytecode/SOT) path."""
    return _dynamic(module, state, lambda model: paddle.jit.to_static(model, full_graph=False))


def run_static(module: Any, state: Dict[str, np.ndarray]) -> Result:
    """A pure static program: `enable_static`, `program_guard`, `gradients`, `Executor`."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            xs = []
            for i, (shape, dtype, needs_grad) in enumerate(module.INPUTS):
                x = paddle.static.data(f"x{i}", shape, dtype)
                x.stop_gradient = not needs_grad
                xs.append(x)
            paddle.seed(0)
            model = module.Model()
            outputs = _tensor_leaves(model(*xs))
            loss = _loss(outputs)
            wrt = [x for x in xs if not x.stop_gradient]
            params = list(model.named_parameters())
            grads = paddle.static.gradients([loss], wrt + [p for _, p in params]) if loss is not None else []
            # PIR gives a null-typed value where backward returned None: no gradient.
            grads = [None if g is None or (hasattr(g, "initialized") and not g.initialized()) else g for g in grads]
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        scope = paddle.static.global_scope()
        for key, param in model.state_dict().items():
            scope.find_var(param.name).get_tensor().set(state[key], paddle.CPUPlace())
        feed = {f"x{i}": a for i, a in enumerate(input_arrays(module))}
        fetch = outputs + [g for g in grads if g is not None]
        values = exe.run(main, feed=feed, fetch_list=fetch)
        out_values, grad_values = values[: len(outputs)], iter(values[len(outputs):])
        names = [f"x{i}" for i, x in enumerate(xs) if not x.stop_gradient] + [n for n, _ in params]
        grad_map = {n: (None if g is None else next(grad_values)) for n, g in zip(names, grads)}
        for name in names[len(grads):]:
            grad_map[name] = None
        return Result(list(out_values), grad_map, count_pylayer_ops(main))
    finally:
        paddle.disable_static()


def _input_spec(module: Any) -> List[Any]:
    return [
        paddle.static.InputSpec(shape=[-1] + list(shape[1:]), dtype=dtype, name=f"x{i}", stop_gradient=not grad)
        for i, (shape, dtype, grad) in enumerate(module.INPUTS)
    ]


def _model_file(prefix: str) -> str:
    for ext in (".json", ".pdmodel"):  # PIR (3.x) / legacy Program
        if os.path.exists(prefix + ext):
            return prefix + ext
    raise FileNotFoundError(f"no model file written for {prefix}")


def run_jit_save(module: Any, state: Dict[str, np.ndarray]) -> List[Result]:
    """`paddle.jit.save`, then `paddle.jit.load` and a `paddle.inference` predictor."""
    model = _model(module, state)
    model.eval()
    arrays = input_arrays(module)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "model")
        paddle.jit.save(model, prefix, input_spec=_input_spec(module))
        loaded = paddle.jit.load(prefix)
        loaded.eval()
        outs = loaded(*[paddle.to_tensor(a) for a in arrays])
        from_load = Result([t.numpy() for t in _tensor_leaves(outs)], {})

        # The predictor's default CPU configuration: oneDNN on, every pass. But for a case
        # naming the framework bug that rules oneDNN out on paddle 3.3.1: its oneDNN kernels
        # give wrong outputs on this project's CI machines (AMD EPYC, AVX2) for the same
        # models written with built-in ops (test_predictor_onednn.py).
        config = paddle.inference.Config(_model_file(prefix), prefix + ".pdiparams")
        config.disable_gpu()
        config.disable_glog_info()
        if PIR and getattr(module, "PREDICTOR_ONEDNN_OFF", ""):
            config.disable_mkldnn()
        predictor = paddle.inference.create_predictor(config)
        for name, array in zip(predictor.get_input_names(), arrays):
            predictor.get_input_handle(name).copy_from_cpu(array)
        predictor.run()
        from_predictor = Result(
            [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()], {}
        )
        program_ops = saved_pylayer_ops(prefix)
    return [from_load, from_predictor._replace(pylayer_ops=program_ops)]


def saved_pylayer_ops(prefix: str) -> int:
    """pylayer ops in the exported inference program."""
    paddle.enable_static()
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        program, _, _ = paddle.static.load_inference_model(prefix, exe)
        return count_pylayer_ops(program)
    finally:
        paddle.disable_static()


def train_losses(module: Any, state: Dict[str, np.ndarray], wrap: Callable[[Any], Any], steps: int) -> List[float]:
    """SGD steps on seeded data; the losses, one per step."""
    model = _model(module, state)
    fn = wrap(model)
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    losses = []
    for step in range(steps):
        inputs = []
        for array, (_, _, needs_grad) in zip(input_arrays(module, seed=step + 1), module.INPUTS):
            tensor = paddle.to_tensor(array)
            tensor.stop_gradient = not needs_grad
            inputs.append(tensor)
        loss = _loss(fn(*inputs))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    return losses


def static_train_losses(module: Any, state: Dict[str, np.ndarray], steps: int) -> List[float]:
    """The same SGD steps as a pure static program with `optimizer.minimize`."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            xs = []
            for i, (shape, dtype, needs_grad) in enumerate(module.INPUTS):
                x = paddle.static.data(f"x{i}", shape, dtype)
                x.stop_gradient = not needs_grad
                xs.append(x)
            paddle.seed(0)
            model = module.Model()
            loss = _loss(model(*xs))
            paddle.optimizer.SGD(0.1).minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        scope = paddle.static.global_scope()
        for key, param in model.state_dict().items():
            scope.find_var(param.name).get_tensor().set(state[key], paddle.CPUPlace())
        losses = []
        for step in range(steps):
            feed = {f"x{i}": a for i, a in enumerate(input_arrays(module, seed=step + 1))}
            (value,) = exe.run(main, feed=feed, fetch_list=[loss])
            losses.append(float(value))
        return losses
    finally:
        paddle.disable_static()


def run_time_error(module: Any, mode: str) -> BaseException:
    """What `module` raises in `mode` (`to_static`, `static`, ...) with its `FLAGS` set (a dict
    for `paddle.set_flags`, as `FLAGS_check_nan_inf`); AssertionError when it runs."""
    flags = getattr(module, "FLAGS", {})
    before = paddle.get_flags(list(flags)) if flags else {}
    paddle.set_flags(flags)
    try:
        globals()["run_" + mode](module, reference_state(module))
    except Exception as exc:  # noqa: BLE001 - the error is the result
        return exc
    finally:
        paddle.set_flags(before)
        if not paddle.in_dynamic_mode():
            paddle.disable_static()
    raise AssertionError(f"{module.__name__} ran in {mode} without an error")


def frames_in(path: str, message: str) -> List[Tuple[int, str]]:
    """(line, function) of each frame of `path` an error message names
    (`File "PATH", line N, in NAME`, as the framework prints an op's call stack)."""
    found = re.findall(rf'File "{re.escape(path)}", line (\d+), in ([^\n]+)', message)
    return [(int(line), name.strip()) for line, name in found]


RTOL, ATOL = 1e-6, 1e-7


def tolerance(module: Any) -> Tuple[float, float]:
    """(rtol, atol) for a case: the suite's, or the case's own `TOLERANCE` (each such case
    says why its static graph cannot match eager to float32 precision)."""
    return getattr(module, "TOLERANCE", (RTOL, ATOL))


def _is_input(name: str) -> bool:
    """Gradient names of `_dynamic` and `run_static`: `x<i>` for inputs, the rest parameters."""
    return name[:1] == "x" and name[1:].isdigit()


def assert_same(actual: Result, expected: Result, with_grads: bool = True,
                tol: Tuple[float, float] = (RTOL, ATOL), sot: bool = False) -> None:
    """Outputs (and gradients) of `actual` equal `expected`'s; AssertionError otherwise.

    `sot`: `actual` ran under SOT, whose subgraphs take the parameters as inputs, so that a
    parameter no gradient reaches gets zeros where eager leaves None, with built-in ops too
    (paddle 3.3.1, a `p.detach()` use under `min_graph_size_guard(0)`)."""
    rtol, atol = tol
    assert len(actual.outputs) == len(expected.outputs), (
        f"{len(actual.outputs)} output tensor(s), eager has {len(expected.outputs)}")
    for got, want in zip(actual.outputs, expected.outputs):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg="forward output")
    if with_grads:
        assert sorted(actual.grads) == sorted(expected.grads), "gradients of other inputs than eager"
        for name, want in expected.grads.items():
            got = actual.grads[name]
            if want is None and (sot or _is_input(name)):
                # The framework's run_program gives every input of a to_static function that
                # needs one a gradient, zeros where nothing reaches it (built-in ops too).
                assert got is None or not np.any(got), f"gradient of {name}: eager has none"
            elif want is None:
                # Optimizers skip a parameter whose .grad is None; zeros would let weight
                # decay and momentum move it.
                assert got is None, f"gradient of parameter {name}: eager leaves .grad None, got zeros"
            else:
                assert got is not None, f"gradient of {name} missing"
                np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"gradient of {name}")


def check_mode(module: Any, original: Any, mode: str, state: Dict[str, np.ndarray], expected: Result) -> None:
    """Run `module` (a transpiled case, or the original itself) in `mode` and compare it with
    `expected`, the original run eagerly; raises (AssertionError on a mismatch)."""
    tol = tolerance(original)
    if mode == "eager":
        assert_same(run_eager(module, state), expected, tol=tol)
    elif mode == "to_static":
        result = run_to_static(module, state)
        assert_same(result, expected, tol=tol)
        assert result.pylayer_ops >= 1, "the to_static program holds no pylayer op"
        if module is not original:  # the framework's own path keeps its ops
            assert not result.run_pylayer_ops, f"the programs run hold {result.run_pylayer_ops} pylayer op(s)"
    elif mode == "sot":
        assert_same(run_sot(module, state), expected, tol=tol, sot=True)
    elif mode == "static":
        result = run_static(module, state)
        assert_same(result, expected, tol=tol)
        assert result.pylayer_ops >= 1, "the static program holds no pylayer op"
    elif mode == "jit_save":
        loaded, predicted = run_jit_save(module, state)
        assert_same(loaded, expected, with_grads=False, tol=tol)
        # oneDNN's kernels sum in another order than eager's: float32 rounding apart.
        assert_same(predicted, expected, with_grads=False, tol=(max(tol[0], 1e-5), max(tol[1], 1e-6)))
        assert predicted.pylayer_ops == 0, f"the saved inference program holds {predicted.pylayer_ops} pylayer op(s)"
    elif mode == "train":
        steps = getattr(original, "STEPS", 3)
        rtol, atol = tol
        want = train_losses(original, state, lambda m: m, steps)
        got = train_losses(module, state, lambda m: paddle.jit.to_static(m, full_graph=True), steps)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg="to_static training losses")
        got_static = static_train_losses(module, state, steps)
        np.testing.assert_allclose(got_static, want, rtol=rtol, atol=atol, err_msg="static training losses")
    else:
        raise ValueError(f"unknown mode {mode!r}")
