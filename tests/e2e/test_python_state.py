"""Python state in forward and backward (docs/DESIGN.md "Python state in bodies"), on both versions.

Each model of special/python_state.py runs two steps (the same batch) in a process of its own
(this file run as a script: SOT keeps state across the models a process runs), eagerly and in
each mode, and reports its loss, gradients and the Python state the bodies wrote. The
transpiled module (ours) and the original (the framework's own path) are judged alike:
- `sot` (`to_static(full_graph=False)`, SOT's minimum graph size 0 so that nothing runs eagerly
  for being small): every step equals eager's, values and state. Ours: a call whose forward
  writes Python state, sets an input's `stop_gradient`, or reads state SOT holds writes to, runs
  eagerly (3.3.1), or every call does (2.6.2); what a call SOT keeps in its graph reads is read
  when that graph is built (`TRACE_TIME_UNDER_SOT`);
- `to_static` (AST) and `static` (a program built once, run twice; its calls alike are the
  replay's): the first step equals eager's, and the state after it; forward's effects are
  trace-time (they happen when the program is built, once per call in call order, and not when
  the built program runs again), so the state after the second step is the first's;
- `ModelUnpermuteFed` under to_static: ours refuses with a PyLayerContractError.
The verdicts are docs/SUPPORT.md's `python-state` rows (`python_state_table.py`): this version's
must equal the committed `docs/support-data/python-state/<version>.json`, which
`python test_python_state.py --record` rewrites.
"""
import functools
import json
import os
import re
import subprocess
import sys
from typing import Dict, List, Optional

import numpy as np
import paddle
import pytest

import harness
from conftest import HERE

SOURCE = os.path.join(HERE, "special", "python_state.py")
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "support-data", "python-state")
VERSION = paddle.__version__
ON_2_6 = VERSION.startswith("2.6")
STEPS = 2
MODELS = {
    "ModelInitOnceQuant": "a fake quant's init-once flag, scale and call counter on its class",
    "ModelRoutedStats": "an MoE gate's token counts in a module dict, its call order in a list",
    "ModelCountedRouter": "a statistics object passed to `apply`, its counters written in forward",
    "ModelConfigClip": "a config dict the model writes just before each call, read in forward",
    "ModelUnpermute": "forward sets `stop_gradient = False` on its (detached) tokens",
    "ModelUnpermuteFed": "the same on tokens the caller feeds with `stop_gradient` True",
    "ModelSplitGate": "a method patched onto `paddle.Tensor` as a lambda",
}
# The model's own `CONFIG["clip"] = ...` fails in dy2static itself under AST (an item assignment
# to a global dict: UndefinedVar), for the framework's own path and ours alike.
NOT_AST = {"ModelConfigClip"}
# Under SOT (3.3.1) the second ConfigClip call is built in the graph after the first's break, and
# what its forward reads is read when that graph is built (trace-time, as under AST): SOT's
# guards do not see inside the call, so later steps run the graph built with the first value.
TRACE_TIME_UNDER_SOT = {"ModelConfigClip"}
REFUSED = {("ModelUnpermuteFed", "to_static")}


@functools.lru_cache(maxsize=None)
def _run(path: str, model_name: str, mode: str) -> dict:
    """The script's report of one model in one mode, run in a fresh process."""
    env = dict(os.environ, MIN_GRAPH_SIZE="0")
    done = subprocess.run([sys.executable, __file__, path, model_name, mode], capture_output=True, text=True,
                          env=env, timeout=600)
    if done.returncode != 0:
        return {"error": f"exit {done.returncode}: " + (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _difference(have: dict, want: dict) -> Optional[str]:
    """What differs between one step of two runs (values, then state), or None."""
    if not np.isclose(have["loss"], want["loss"], rtol=1e-6, atol=0):
        return f"loss {have['loss']:.6g}, eager {want['loss']:.6g}"
    for name in ("x_grad", "t_grad", "w_grad"):
        if (have[name] is None) != (want[name] is None):
            return f"{name.replace('_', '.')} is {'None' if have[name] is None else 'set'}, eager's is not"
        if want[name] is not None and not np.allclose(have[name], want[name], rtol=1e-6, atol=1e-7):
            return f"{name.replace('_', '.')} differs"
    if have["state"] != want["state"]:
        keys = sorted(k for k in want["state"] if have["state"].get(k) != want["state"][k])
        return f"state differs ({', '.join(keys)})"
    return None


def verdict(have: dict, want: dict, every_step: bool, refused: bool = False, built_once: bool = True) -> str:
    """A cell: ✅ and how it was compared, or ❌ and what differed (or the error). Not
    `every_step`: the first step, and (`built_once`) no Python state changed by the second."""
    if "error" in have:
        if refused and have["error"].startswith("PyLayerContractError"):
            return "✅ refused: PyLayerContractError at the class's forward"
        return "❌ " + have["error"][:160]
    if refused:
        return "❌ ran, where it must refuse"
    steps = range(STEPS) if every_step else range(1)
    for step in steps:
        wanted = want["steps"][step]
        if not every_step and "model_clip" in have:  # a static program: the model's code ran once
            wanted = dict(wanted, state=dict(wanted["state"], clip=have["model_clip"]))
        found = _difference(have["steps"][step], wanted)
        if found is not None:
            return f"❌ step {step + 1}: {found}"
    if every_step:
        return "✅ every step"
    if not built_once:
        return "✅ first step; a call in SOT's graph reads state when the graph is built"
    if have["steps"][1]["state"] != have["steps"][0]["state"]:
        return "❌ the built program changed Python state again"
    return "✅ first step; effects at build time"


def cells(model_name: str, transpiled: str) -> Dict[str, str]:
    """The docs/SUPPORT.md row of one model on this version: the framework's path and ours."""
    eager = _run(SOURCE, model_name, "eager")
    row = {"covers": MODELS[model_name], "eager": "✅ runs" if "error" not in eager else "❌ " + eager["error"]}
    for who, path in (("framework", SOURCE), ("pylayer2static", transpiled)):
        for mode in ("to_static", "sot", "static"):
            if who == "framework" and mode == "static":
                continue  # an untranspiled PyLayer has no static-program path: apply needs a dynamic graph
            if mode == "to_static" and model_name in NOT_AST:
                row[f"{who} {mode}"] = "— the model's own dict store fails in dy2static"
                continue
            have = _run(path, model_name, mode)
            if mode == "sot":
                every = not (who == "pylayer2static" and model_name in TRACE_TIME_UNDER_SOT and not ON_2_6)
                row[f"{who} {mode}"] = verdict(have, eager, every, built_once=False)
            else:
                row[f"{who} {mode}"] = verdict(have, eager, False, who == "pylayer2static"
                                               and (model_name, mode) in REFUSED)
    return row


@pytest.fixture(scope="module")
def transpiled(transpile) -> str:
    return transpile(SOURCE)


@pytest.mark.parametrize("model_name", list(MODELS))
def test_ours_equal_eager_or_refused(transpiled, model_name) -> None:
    row = cells(model_name, transpiled)
    ours = {key: cell for key, cell in row.items() if key.startswith("pylayer2static")}
    assert all(cell.startswith(("✅", "—")) for cell in ours.values()), ours


def test_fed_tokens_get_eagers_gradient_in_a_static_program(transpiled) -> None:
    """The tokens a static program is fed get eager's gradient: their `stop_gradient` flipped by
    forward reaches the caller's variable."""
    want = _run(SOURCE, "ModelUnpermuteFed", "eager")
    have = _run(transpiled, "ModelUnpermuteFed", "static")
    assert want["steps"][0]["t_grad"] is not None
    assert _difference(have["steps"][0], want["steps"][0]) is None


def test_refusal_names_the_class_and_what_to_do(transpiled) -> None:
    refused = _run(transpiled, "ModelUnpermuteFed", "to_static")
    assert "PyLayer Unpermute" in refused["error"] and "stop_gradient = False" in refused["error"]
    assert "python_state.py:" in refused["error"]


def test_support_rows_are_current(transpiled) -> None:
    path = os.path.join(DATA_DIR, f"{VERSION}.json")
    with open(path, encoding="utf-8") as f:
        committed = json.load(f)
    fresh = {name: cells(name, transpiled) for name in MODELS}
    assert committed["models"] == fresh, f"stale: run `{sys.executable} {__file__} --record`"


def _report(path: str, model_name: str, mode: str) -> dict:
    paddle.seed(0)
    module = harness.load_module(path, "python_state_" + mode)
    rng = np.random.RandomState(0)
    x_value = rng.standard_normal((2, 4)).astype("float32")
    t_value = rng.standard_normal((2, 4)).astype("float32")
    try:
        if mode == "static":
            steps, model_clip = _static_steps(module, model_name, x_value, t_value)
            return {"steps": steps, "model_clip": model_clip}
        return {"steps": _dynamic_steps(module, model_name, mode, x_value, t_value)}
    except Exception as exc:  # noqa: BLE001 - reported: a verdict of its own
        last = (str(exc).strip().splitlines() or [""])[-1].strip()
        last = re.sub(r"0x[0-9a-f]+", "0x…", last)  # no address of this run
        if last.startswith(type(exc).__name__ + ":"):
            last = last[len(type(exc).__name__) + 1:].strip()
        return {"error": f"{type(exc).__name__}: {last}"}


def _dynamic_steps(module, model_name: str, mode: str, x_value, t_value) -> List[dict]:
    model = getattr(module, model_name)()
    if mode in ("to_static", "sot"):
        model = paddle.jit.to_static(model, full_graph=mode == "to_static")
    steps = []
    for _ in range(STEPS):
        x = paddle.to_tensor(x_value, stop_gradient=False)
        t = paddle.to_tensor(t_value, stop_gradient=True)
        loss = model(x, t).sum()
        loss.backward()
        weight = model.proj.weight
        steps.append({"loss": float(loss), "x_grad": _array(x.grad), "t_grad": _array(t.grad),
                      "w_grad": _array(weight.grad), "state": module.STATE()})
        weight.clear_gradient()
    return steps


def _static_steps(module, model_name: str, x_value, t_value):
    """Two runs of a static program built once; and the clip bound the model's code wrote."""
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 4], "float32")
        x.stop_gradient = False
        t = paddle.static.data("t", [2, 4], "float32")
        t.stop_gradient = True
        model = getattr(module, model_name)()
        loss = model(x, t).sum()
        wanted = [x, t, model.proj.weight]
        grads = paddle.static.gradients([loss], [v for v in wanted if not v.stop_gradient])
    model_clip = module.STATE()["clip"]
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    # the eager model's parameters: the same seed, made in the same order
    paddle.disable_static()
    paddle.seed(0)
    values = [p.numpy() for p in getattr(module, model_name)().parameters()]
    paddle.enable_static()
    for parameter, value in zip(model.parameters(), values):
        paddle.static.global_scope().find_var(parameter.name).get_tensor().set(value, paddle.CPUPlace())
    steps = []
    for _ in range(STEPS):
        got = iter(exe.run(main, feed={"x": x_value, "t": t_value}, fetch_list=[loss] + list(grads)))
        step = {"loss": float(next(got))}
        for name, variable in zip(("x_grad", "t_grad", "w_grad"), wanted):
            step[name] = None if variable.stop_gradient else np.asarray(next(got)).tolist()
        steps.append(dict(step, state=module.STATE()))
    return steps, model_clip


def _array(tensor):
    return None if tensor is None else tensor.numpy().tolist()


def _record() -> None:
    """Rewrite this version's rows (docs/support-data/python-state/<version>.json)."""
    binary = os.environ.get("P2S_BIN", os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "pylayer2static"))
    out_dir = os.path.join(DATA_DIR, ".transpiled")
    os.makedirs(out_dir, exist_ok=True)
    transpiled = os.path.join(out_dir, "python_state.py")
    subprocess.run([binary, SOURCE, "-o", transpiled], check=True)
    data = {"version": VERSION, "ir": "PIR" if harness.PIR else "legacy Program IR",
            "models": {name: cells(name, transpiled) for name in MODELS}}
    os.remove(transpiled)
    os.rmdir(out_dir)
    path = os.path.join(DATA_DIR, f"{VERSION}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print(f"wrote {os.path.relpath(path)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        _record()
    else:
        print(json.dumps(_report(*sys.argv[1:4])))
