"""One rank of a `paddle.distributed.launch` run of tests/dist (started by run.py).

    python -m paddle.distributed.launch --nproc_per_node 2 tests/dist/worker.py \
        --variant p2s --original tests/dist/models.py --transpiled OUT/models_p2s.py --out OUT/p2s

Trains every model of models.py for a few SGD steps eagerly (the original module) and under
`paddle.jit.to_static`, `full_graph=True` (AST) and `False` (SOT) — the transpiled module (`--variant p2s`), or the
original one, i.e. the framework's own dy2static PyLayer path (`--variant framework`, which
never imports the runtime) — and writes this rank's losses and final parameters to
OUT/rank<N>.json. The p2s variant also saves each trained to_static model with
`paddle.jit.save` (one export per rank), loads it with `paddle.jit.load` and records the
outputs of the eager, to_static and loaded models on one input; then it runs each model
through every mode of tests/e2e/harness.py (to_static, SOT, a pure static program,
jit.save with jit.load and an inference predictor, SGD training) as an e2e case.
"""
import argparse
import importlib.util
import json
import os
import re
import sys
import traceback
import types

import numpy as np
import paddle
import paddle.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import harness  # noqa: E402  (tests/e2e/harness.py: its modes, pylayer op counts)

STEPS = 3


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def error_summary(exc):
    """`Type: message`, the line of the framework's message that names the error (dy2static
    wraps it in the transformed code's traceback), without addresses that vary between runs."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    named = [line for line in lines if re.match(r"^\w*(Error|Exception)\b", line)]
    text = named[-1] if named else (lines[-1] if lines else "")
    if not text.startswith(type(exc).__name__) and not named:
        text = f"{type(exc).__name__}: {text}"
    return re.sub(r"0x[0-9a-f]+", "0x…", text)


def train(cls, wrap):
    """STEPS SGD steps of a new `cls`; the model, the callable trained and what to record."""
    model = cls()
    fn = wrap(model)
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    losses = []
    for step in range(STEPS):
        loss = paddle.mean(fn(paddle.to_tensor(cls.batch(step))))
        loss.backward()
        model.sync_gradients()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    params = {key: value.numpy().tolist() for key, value in model.state_dict().items()}
    return model, fn, {"losses": losses, "params": params}


STATIC_MODES = {  # the two paths of paddle.jit.to_static
    "to_static": lambda model: paddle.jit.to_static(model, full_graph=True),  # AST
    "sot": lambda model: paddle.jit.to_static(model, full_graph=False),  # bytecode, @to_static's default
}


def run_model(original, static_module, name):
    """Eager (and the serial reference), then each static mode; the record and, when
    to_static trained, the eager and to_static models."""
    record = {}
    eager_model, _, record["eager"] = train(original.MODELS[name], lambda m: m)
    if name in original.SERIAL:
        record["serial"] = train(original.SERIAL[name], lambda m: m)[2]
    trained = None
    for mode, wrap in STATIC_MODES.items():
        try:
            static_model, fn, record[mode] = train(static_module.MODELS[name], wrap)
        except Exception as exc:  # noqa: BLE001 - recorded for the side-by-side table
            traceback.print_exc()
            record[mode] = {"error": error_summary(exc)}
            continue
        if mode == "to_static":
            record["pylayer_ops"] = harness.count_pylayer_ops(fn.forward.concrete_program.main_program)
            trained = (eager_model, static_model)
    return record, trained


def save_and_load(name, eager_model, static_model, out_dir):
    """jit.save of this rank's trained to_static model, jit.load, outputs of all three."""
    x = paddle.to_tensor(eager_model.batch(STEPS))
    eager_model.eval()
    static_model.eval()
    prefix = os.path.join(out_dir, f"{name}.rank{dist.get_rank()}", "model")
    spec = paddle.static.InputSpec(list(x.shape), "float32", "input")
    record = {"eager": eager_model(x).numpy().tolist(), "static": static_model(x).numpy().tolist()}
    try:
        paddle.jit.save(static_model, prefix, input_spec=[spec])
        loaded = paddle.jit.load(prefix)
        loaded.eval()
        record["loaded"] = loaded(x).numpy().tolist()
        record["pylayer_ops"] = harness.saved_pylayer_ops(prefix)
    except Exception as exc:  # noqa: BLE001 - recorded
        traceback.print_exc()
        record["error"] = error_summary(exc)
    return record


def harness_modes(original, transpiled, name):
    """Every mode of tests/e2e/harness.py for the transpiled model, as an e2e case (one input,
    one step's outputs and input/parameter gradients, before any synchronization of
    gradients, compared with the original's eager run); None or the error, per mode."""
    inputs = [(list(original.MODELS[name].batch(0).shape), "float32", True)]
    case = types.SimpleNamespace(Model=original.MODELS[name], INPUTS=inputs)
    copy = types.SimpleNamespace(Model=transpiled.MODELS[name], INPUTS=inputs)
    state = harness.reference_state(case)
    expected = harness.run_eager(case, state)
    results = {}
    for mode in harness.MODES:
        try:
            harness.check_mode(copy, case, mode, state, expected)
            results[mode] = None
        except Exception as exc:  # noqa: BLE001 - recorded
            traceback.print_exc()
            results[mode] = error_summary(exc)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=("p2s", "framework"), required=True)
    parser.add_argument("--original", required=True)
    parser.add_argument("--transpiled")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    original = load(args.original, "dist_models")
    static_module = load(args.transpiled, "dist_models_p2s") if args.variant == "p2s" else original
    original.init_distributed()
    rank = dist.get_rank()
    os.makedirs(args.out, exist_ok=True)
    result = {"paddle": paddle.__version__, "rank": rank, "world_size": dist.get_world_size(), "models": {}}
    for name in original.MODELS:
        record, trained = run_model(original, static_module, name)
        if args.variant == "p2s":
            if trained is not None:
                record["jit"] = save_and_load(name, *trained, args.out)
            record["harness"] = harness_modes(original, static_module, name)
        result["models"][name] = record
        for mode in STATIC_MODES:
            print(f"rank {rank} {name} {mode}: {record[mode].get('losses', record[mode].get('error'))}, "
                  f"eager {record['eager']['losses']}", flush=True)
    result["runtime_loaded"] = "pylayer2static_runtime" in sys.modules
    with open(os.path.join(args.out, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
