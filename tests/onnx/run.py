"""run.py --bin BIN --tools DIR --out DIR — ONNX deployment of the e2e cases on the installed
paddlepaddle (run with a Paddle venv's python; tests/onnx/run.sh runs it once per version).

Every case of tests/e2e that exports (`jit_save` among its modes: `cases/*.py` and the tree
cases) is saved with `paddle.jit.save` twice: transpiled (`p2s`) and as written (`framework`,
the framework's own path, in a process that never imports the runtime). Each export is
converted by the pinned paddle2onnx of this framework version (DIR/paddle2onnx-<line>, put on
sys.path after site-packages, so this venv's numpy and protobuf are the ones imported) and run
by ONNX Runtime in the tools venv (DIR/venv, a process of its own) on the case's inputs; its
outputs are compared with the original run eagerly in eval mode (rtol 1e-5, atol 1e-6: the
predictor's tolerance in tests/e2e, float32 rounding apart). The small built-in models of
twins.py, no PyLayer anywhere, go the same way: a case listed in unconverted.txt names the twin
that shows paddle2onnx lacks the same op without any PyLayer.

Prints a line per check, writes DIR/summary.json (the cells of table.py) and ends with
`onnx: N passed, N failed`. A transpiled export passes when it converts and equals eager, or
when it fails to convert exactly as unconverted.txt lists it (the lacking op) and its twin fails
alike; the framework's path is recorded, not judged.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(os.path.dirname(HERE), "e2e")
sys.path.insert(0, E2E)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import paddle  # noqa: E402

import harness  # noqa: E402
import support_matrix  # noqa: E402  (why a case failed, as docs/SUPPORT.md's other tables say it)
import tree_cases  # noqa: E402
import twins  # noqa: E402

CASES_DIR = os.path.join(E2E, "cases")
LISTED = os.path.join(HERE, "unconverted.txt")
MARKER = "P2S-ONNX "
KINDS = ("p2s", "framework")
CONVERT_TIMEOUT = 300
RTOL, ATOL = 1e-5, 1e-6


def paddle2onnx_line() -> str:
    """The paddle2onnx release line for this framework: 2.x needs paddle 3 (it links
    libpaddle and refuses older releases), 1.x reads 2.x's legacy `.pdmodel` on its own."""
    return "3" if paddle.__version__.startswith("3") else "2.6"


# --- the cases -------------------------------------------------------------------------------

def _case_files() -> Dict[str, str]:
    return {f[:-3]: os.path.join(CASES_DIR, f) for f in sorted(os.listdir(CASES_DIR)) if f.endswith(".py")}


def originals() -> Dict[str, Any]:
    """{case: original module} of every case that exports on this version."""
    found = {name: harness.load_module(path, f"onnx_original_{name}") for name, path in _case_files().items()}
    found.update((f"tree:{name}", module) for name, module in tree_cases.ORIGINALS.items())
    return {name: module for name, module in found.items() if "jit_save" in harness.case_modes(module)}


def transpiled(out: str, names: List[str]) -> Dict[str, Any]:
    """{case: transpiled module}, from the copies `transpile` wrote into `out`."""
    tree = tree_cases.import_cases(os.path.join(out, "tree"))
    return {name: tree[name[5:]] if name.startswith("tree:") else
            harness.load_module(os.path.join(out, "transpiled", name + ".py"), f"onnx_transpiled_{name}")
            for name in names}


def transpile(binary: str, out: str) -> None:
    os.makedirs(os.path.join(out, "transpiled"), exist_ok=True)
    for name, path in _case_files().items():
        target = os.path.join(out, "transpiled", name + ".py")
        proc = subprocess.run([binary, path, "-o", target], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{binary} {path} -o {target} exited {proc.returncode}:\n{proc.stderr}")
    tree_cases.transpile_tree(binary, os.path.join(out, "tree"))


def _slug(name: str) -> str:
    return name.replace(":", "-")


# --- exports (child processes) ---------------------------------------------------------------

def export_all(kind: str, out: str, start: int) -> None:
    """`--export KIND`: jit.save each case from number `start` on, one marker line per case
    (None, or why it failed); the framework's child also writes each case's inputs and eager
    outputs (DIR/ref/CASE.npz) and exports the twins."""
    cases = originals()
    modules = cases if kind == "framework" else transpiled(out, list(cases))
    jobs: List[Tuple[str, Callable[[], None]]] = []
    for name, original in cases.items():
        jobs.append((name, lambda name=name, original=original: _export_case(
            original, modules[name], os.path.join(out, kind, _slug(name)), kind == "framework")))
    if kind == "framework":
        jobs.extend((f"twin:{name}", lambda name=name: twins.export(name, os.path.join(out, "twin", name)))
                    for name in twins.TWINS)
    for name, job in jobs[start:]:
        print(MARKER + json.dumps([name, support_matrix.attempt(job)]), flush=True)
        support_matrix.forget_program_records()
    if kind == "framework":
        assert "pylayer2static_runtime" not in sys.modules, "the framework's exports ran with the runtime imported"


def _export_case(original: Any, module: Any, where: str, reference: bool) -> None:
    state = harness.reference_state(original)
    os.makedirs(where, exist_ok=True)
    if reference:
        arrays = harness.input_arrays(original)
        eager = harness.run_eval(original, state, to_static=False).outputs
        np.savez(os.path.join(where, "ref.npz"), **{f"x{i}": a for i, a in enumerate(arrays)},
                 **{f"out{i}": o for i, o in enumerate(eager)})
    model = harness._model(module, state)
    model.eval()
    paddle.jit.save(model, os.path.join(where, "model"), input_spec=harness._input_spec(original))


def run_children(args: List[str], names: List[str]) -> Dict[str, Optional[str]]:
    """{job: None or why} from children that each go on where the last one died: jit.save of
    the framework's own path can abort the process (paddle 3.3.1, SIGABRT after failed builds of
    other cases; tests/e2e/support_matrix.py meets it too). A job that kills a fresh child as
    its first job is a death of its own."""
    results: Dict[str, Optional[str]] = {}
    while len(results) < len(names):
        first = len(results)
        proc = subprocess.run([sys.executable, os.path.abspath(__file__)] + args + ["--start", str(first)],
                              capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith(MARKER):
                name, why = json.loads(line[len(MARKER):])
                results[name] = why
        if proc.returncode > 0:
            raise SystemExit(f"onnx: {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
        if proc.returncode < 0 and len(results) == first:
            results[names[first]] = f"the process died of signal {-proc.returncode}"
    return results


# --- conversion ------------------------------------------------------------------------------

def convert_all(tools: str, exports: Dict[str, str]) -> Dict[str, Dict[str, Any]]:
    """{key: {"error": None or why, "ops": [lacking ops]}} for each export directory: the
    conversion of each runs in a fork of this process, since paddle2onnx aborts the process on a
    model it cannot convert."""
    sys.path.append(os.path.join(tools, f"paddle2onnx-{paddle2onnx_line()}"))
    import paddle2onnx

    results, logs = {}, {}
    for key, where in exports.items():
        model = next(os.path.join(where, f"model{ext}") for ext in (".json", ".pdmodel")
                     if os.path.exists(os.path.join(where, f"model{ext}")))
        target = os.path.join(where, "model.onnx")
        log = os.path.join(where, "paddle2onnx.log")
        if os.path.exists(target):
            os.remove(target)
        pid = os.fork()
        if pid == 0:  # the child: paddle2onnx's output into the log, its abort ends only this fork
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            import signal

            signal.alarm(CONVERT_TIMEOUT)
            kwargs = {"optimize_tool": "None"} if paddle2onnx.__version__.startswith("2") else {}
            # verbose: the program and each op it starts converting are logged, so a failure
            # names its op. optimize_tool None: polygraphy's constant folding (2.x's default)
            # installs its dependencies on the fly; ONNX Runtime folds constants itself.
            paddle2onnx.export(model, os.path.join(where, "model.pdiparams"), save_file=target, verbose=True,
                               **kwargs)
            os._exit(0 if os.path.exists(target) else 3)
        _, status = os.waitpid(pid, 0)
        with open(log, encoding="utf-8", errors="replace") as f:
            logs[key] = f.read()
        if status == 0 and os.path.exists(target):
            results[key] = {"error": None, "ops": []}
    converted_ops = set().union(*(_program_ops(logs[key]) for key in results))
    for key in exports:
        if key not in results:
            results[key] = _conversion_failure(logs[key], converted_ops)
    return results


def _program_ops(log: str) -> Set[str]:
    """The ops of the program paddle2onnx 2.x logs (verbose), sub-blocks included."""
    return set(re.findall(r'^\s*(?:\(.*?\) = )?"([\w.]+)" \(', log, re.M))


def _conversion_failure(log: str, converted_ops: Set[str]) -> Dict[str, Any]:
    """Why a conversion failed and the ops it lacks, from paddle2onnx's verbose log;
    `converted_ops`: the ops of the programs this run converted."""
    errors = [line.split("]", 2)[-1].strip() for line in log.splitlines() if line.startswith("[ERROR]")]
    message = errors[0] if errors else (log.strip().splitlines() or ["no output"])[-1]
    m = re.search(r"not supported yet, including ([\w.,]+)", log)  # 1.x names them
    if m:
        ops = sorted(filter(None, m.group(1).split(",")))
    elif "unsupported operators" in log:
        # 2.1.0 logs an empty list, and its list of supported ops has legacy names: the
        # program's ops that no program it converted held.
        ops = sorted(op for op in _program_ops(log) - converted_ops if not op.startswith("builtin."))
    else:  # the op being converted when it failed
        ops = re.findall(r"Start export (\S+?),? op_id", log)[-1:]
    return {"error": message, "ops": ops}


# --- ONNX Runtime ----------------------------------------------------------------------------

def run_onnxruntime(tools: str, jobs: Dict[str, Dict[str, Any]], out: str) -> Dict[str, Optional[str]]:
    """{key: None or why} from ort_run.py in the tools venv."""
    request = os.path.join(out, "ort-jobs.json")
    with open(request, "w", encoding="utf-8") as f:
        json.dump(jobs, f)
    proc = subprocess.run([os.path.join(tools, "venv", "bin", "python"), "-I", os.path.join(HERE, "ort_run.py"),
                           request], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"onnx: ort_run.py failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


# --- the verdicts ----------------------------------------------------------------------------

def listed(version: str) -> Dict[str, Tuple[str, str, str]]:
    """{case: (stage, lacking op, twin)} of unconverted.txt for this version."""
    found = {}
    with open(LISTED, encoding="utf-8") as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if fields and version.startswith(fields[0]):
                stage, op = fields[2].split(":", 1)
                found[fields[1]] = (stage, op, fields[3])
    return found


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin")
    parser.add_argument("--tools")
    parser.add_argument("--out", required=True)
    parser.add_argument("--export", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.export:
        export_all(args.export, args.out, args.start)
        return 0
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    transpile(args.bin, out)
    names = list(originals())
    exported = {kind: run_children(["--out", out, "--export", kind],
                                   names + ([f"twin:{t}" for t in twins.TWINS] if kind == "framework" else []))
                for kind in KINDS}
    exports = {f"{kind}/{name}": os.path.join(out, kind if not name.startswith("twin:") else "twin",
                                              _slug(name) if not name.startswith("twin:") else name[5:])
               for kind in KINDS for name, why in exported[kind].items() if why is None}
    converted = convert_all(args.tools, exports)
    tolerances = {name: harness.tolerance(module) for name, module in originals().items()}
    jobs = {}
    for key, result in converted.items():
        if result["error"] is None:
            kind, name = key.split("/", 1)
            ref = os.path.join(out, "framework", _slug(name), "ref.npz") if not name.startswith("twin:") else \
                os.path.join(exports[key], "ref.npz")
            rtol, atol = tolerances.get(name, (RTOL, ATOL))
            jobs[key] = {"onnx": os.path.join(exports[key], "model.onnx"), "ref": ref,
                         "rtol": max(rtol, RTOL), "atol": max(atol, ATOL)}
    ran = run_onnxruntime(args.tools, jobs, out)
    return report(names, exported, converted, ran, out)


def _cell(exported: Optional[str], converted: Optional[Dict[str, Any]], ran: Optional[str]) -> Dict[str, Any]:
    if exported is not None:
        return {"stage": "jit.save", "why": exported, "ops": []}
    if converted["error"] is not None:
        return {"stage": "paddle2onnx", "why": converted["error"], "ops": converted["ops"]}
    if ran is not None:  # ONNX Runtime names the node it cannot load or run
        return {"stage": "onnxruntime", "why": ran, "ops": re.findall(r"of operator \((\w+)\)", ran)[:1]}
    return {"stage": None, "why": None, "ops": []}


def report(names: List[str], exported: Dict[str, Dict[str, Optional[str]]], converted: Dict[str, Dict[str, Any]],
           ran: Dict[str, Optional[str]], out: str) -> int:
    version = paddle.__version__
    expected = listed(version)
    passed = failed = 0

    def verdict(ok: bool, text: str) -> None:
        nonlocal passed, failed
        passed, failed = passed + ok, failed + (not ok)
        print(f"onnx: {'ok  ' if ok else 'FAIL'} {text}")

    cells: Dict[str, Dict[str, Any]] = {}
    for kind in KINDS:
        for name in names + ([f"twin:{t}" for t in twins.TWINS] if kind == "framework" else []):
            key = f"{kind}/{name}"
            cells[key] = _cell(exported[kind][name], converted.get(key), ran.get(key))
    for name in names:
        cell = cells[f"p2s/{name}"]
        if name in expected:
            stage, op, twin = expected[name]
            twin_cell = cells[f"framework/twin:{twin}"]
            ok = all(c["stage"] == stage and op in c["ops"] for c in (cell, twin_cell))
            cell["twin"] = twin
            verdict(ok, f"{name}: listed, {stage} lacks {op}; got {_say(cell)}; twin {twin}: {_say(twin_cell)}")
        else:
            verdict(cell["stage"] is None, f"{name}: {_say(cell)}")
    for name in expected:
        if name not in names:
            verdict(False, f"{name} is listed in unconverted.txt but is no exporting case")
    summary = {"paddle": version, "ir": "PIR" if version.startswith("3") else "legacy Program IR",
               "paddle2onnx": _installed_version("paddle2onnx"), "cells": cells}
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    print(f"onnx: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


def _installed_version(module: str) -> str:
    return sys.modules[module].__version__


def _say(cell: Dict[str, Any]) -> str:
    if cell["stage"] is None:
        return "converted, equal to eager"
    ops = f" (lacks {', '.join(cell['ops'])})" if cell["ops"] else ""
    return f"{cell['stage']} failed: {cell['why']}{ops}"


if __name__ == "__main__":
    sys.exit(main())
