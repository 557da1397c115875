"""`make demo`: a sample run eagerly vs its pylayer2static-transpiled copy in static graphs.

    python samples/demo.py samples/cus_tanh_full.py OUT/cus_tanh_full.py

The sample defines `SimpleNet` (forward decorated with `@to_static`), `train(net, opt,
steps)` returning the losses and `save(net, path)`. The demo trains the original
eagerly (to_static switched off) and the transpiled copy under `@to_static` as written
(bytecode/SOT path by default) and under the AST path (`full_graph`, what jit.save
uses), same seed and data; prints the losses side by side; saves the AST-trained copy,
loads it with `paddle.jit.load` and a `paddle.inference` predictor; checks the exported
program holds a `pylayer` op; prints one verdict line and exits 1 on any mismatch.
"""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile

import numpy as np
import paddle

STEPS = 10
SEED = 2024
RTOL, ATOL = 1e-6, 1e-7


def load(path, name, full_graph):
    """Import `path` as `name`; `full_graph` picks what a plain `@to_static` means."""
    os.environ["ENABLE_FALL_BACK"] = "False" if full_graph else "True"  # read at decoration
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        del os.environ["ENABLE_FALL_BACK"]
    return module


def trained(module, to_static):
    paddle.jit.enable_to_static(to_static)
    try:
        paddle.seed(SEED)
        net = module.SimpleNet()
        with contextlib.redirect_stdout(io.StringIO()):  # the sample prints each loss
            losses = module.train(net, paddle.optimizer.SGD(0.001, parameters=net.parameters()), STEPS)
    finally:
        paddle.jit.enable_to_static(True)
    return net, losses


def eager_forward(net, x):
    paddle.jit.enable_to_static(False)
    try:
        return net(paddle.to_tensor(x)).numpy()
    finally:
        paddle.jit.enable_to_static(True)


def pylayer_ops(prefix):
    paddle.enable_static()
    try:
        program, _, _ = paddle.static.load_inference_model(prefix, paddle.static.Executor(paddle.CPUPlace()))
        if isinstance(program, paddle.pir.Program):
            return sum(1 for op in program.global_block().ops if op.name() == "pd_op.pylayer")
        return sum(1 for block in program.blocks for op in block.ops if op.type == "pylayer")
    finally:
        paddle.disable_static()


def predict(prefix, x):
    model = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
    config = paddle.inference.Config(model, prefix + ".pdiparams")
    config.disable_gpu()
    config.disable_glog_info()
    predictor = paddle.inference.create_predictor(config)
    predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(x)
    predictor.run()
    return predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()


def close(a, b):
    return np.allclose(a, b, rtol=RTOL, atol=ATOL)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    original_path, transpiled_path = argv[1], argv[2]
    original = load(original_path, "p2s_demo_original", full_graph=False)
    sot_copy = load(transpiled_path, "p2s_demo_transpiled_sot", full_graph=False)
    ast_copy = load(transpiled_path, "p2s_demo_transpiled_ast", full_graph=True)

    eager_net, eager = trained(original, to_static=False)
    _, sot = trained(sot_copy, to_static=True)
    ast_net, ast = trained(ast_copy, to_static=True)

    print(f"{'step':>4}  {'eager (original)':>18}  {'@to_static (SOT)':>18}  {'to_static (AST)':>18}")
    for step, row in enumerate(zip(eager, sot, ast)):
        print(f"{step:>4}  " + "  ".join(f"{v:>18.9f}" for v in row))
    problems = []
    if not close(sot, eager):
        problems.append("SOT losses differ from eager")
    if not close(ast, eager):
        problems.append("AST losses differ from eager")

    x = np.random.RandomState(0).standard_normal([3, 4]).astype("float32")
    want = eager_forward(eager_net, x)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "simple_net")
        ast_copy.save(ast_net, prefix)
        loaded = paddle.jit.load(prefix)
        loaded.eval()
        from_load = loaded(paddle.to_tensor(x)).numpy()
        from_predictor = predict(prefix, x)
        ops = pylayer_ops(prefix)
    print(f"eager forward {want!r}; jit.load {from_load!r}; predictor {from_predictor!r}; pylayer ops exported: {ops}")
    if not close(from_load, want):
        problems.append("jit.load output differs from eager")
    if not close(from_predictor, want):
        problems.append("inference predictor output differs from eager")
    # Exports hold the PyLayers' forward ops inlined (pylayer2static_runtime/inline.py, legacy.py).
    if ops:
        problems.append(f"the exported program keeps {ops} pylayer op(s)")

    name = os.path.basename(original_path)
    if problems:
        print(f"MISMATCH {name} (paddle {paddle.__version__}): " + "; ".join(problems))
        return 1
    print(f"OK {name} (paddle {paddle.__version__}): {STEPS} losses equal to eager under SOT and AST "
          f"to_static, jit.load and predictor agree, {ops} pylayer op(s) exported")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
