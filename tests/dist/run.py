"""run.py --bin BIN --out DIR — tests/dist on the installed paddlepaddle (run with a venv's python).

First, in one process, `pylayer2static run --package sp_library` of library_call.py (a library
module applying Paddle's own ScatterOp as written: one pylayer op under to_static, in a static
program and, on 3.x, in SOT's one subgraph). Then transpiles models.py into DIR, starts two
`python -m paddle.distributed.launch --nproc_per_node 2` runs of worker.py on CPU (gloo): `p2s`
(eager original vs transpiled under to_static, and jit.save/jit.load of each trained model per
rank) and `framework` (eager original vs the original under the framework's own to_static, without
the runtime), then checks, per model and rank, that the transpiled run's losses and final
parameters equal eager's (tests/e2e's tolerance), and that each model passes every mode of
tests/e2e/harness.py on each rank. Prints one line per check, writes
DIR/summary.json (the cells of the side-by-side table, table.py) and ends with
`e2e-dist: N passed, N failed`.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import paddle

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import harness  # noqa: E402

NRANKS = 2
LAUNCH_TIMEOUT = 600
# pylayer ops in each model's to_static program: one per `.apply` in its forward
PYLAYER_OPS = {"tensor_parallel_mlp": 6, "data_parallel_sync_bn": 1, "expert_parallel_moe": 2,
               "paddle_sequence_parallel_mlp": 4}
COVERS = {
    "tensor_parallel_mlp": "2-way tensor + sequence parallel MLP block: scatter, sequence-parallel "
                           "LayerNorm, all-gather, column/row-parallel linear, reduce-scatter, gather; "
                           "then c_identity / mp_allreduce around a tensor-parallel head; the layers "
                           "take the model-parallel group (fleet's, on 3.x)",
    "data_parallel_sync_bn": "2-way data parallel: batch norm whose forward and backward all-reduce "
                             "the statistics of both ranks' batches; gradients averaged over ranks",
    "expert_parallel_moe": "expert parallel MoE, one expert per rank: all-to-all to the experts and "
                           "back (built from all_gather: gloo has no all_to_all), in the expert-parallel "
                           "group (fleet's model-parallel group, on 3.x)",
    "paddle_sequence_parallel_mlp": "the same sequence-parallel block with Paddle's own PyLayers "
                                    "(`ScatterOp`, `AllGatherOp`, `ReduceScatterOp`, `GatherOp` of "
                                    "`fleet.utils.sequence_parallel_utils`, called as written), which read "
                                    "fleet's model-parallel group (mp_degree 2); reduce-scatter routed "
                                    "through all-reduce on CPU (tests only)",
}


def launch(variant, original, transpiled, out):
    """One launch of worker.py; (per-rank results or None, the tail of the logs on failure)."""
    logs = os.path.join(out, f"logs-{variant}")
    results = os.path.join(out, variant)
    cmd = [sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", str(NRANKS),
           "--log_dir", logs, os.path.join(HERE, "worker.py"), "--variant", variant,
           "--original", original, "--out", results]
    if variant == "p2s":
        cmd += ["--transpiled", transpiled]
    for rank in range(NRANKS):
        path = os.path.join(results, f"rank{rank}.json")
        if os.path.exists(path):
            os.remove(path)
    # The launcher's key-value store writes http.log into its working directory: keep it in `out`.
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=out)
    try:
        status = f"exit {proc.wait(timeout=LAUNCH_TIMEOUT)}"
    except subprocess.TimeoutExpired:
        proc.terminate()  # the launcher stops its workers (each in a session of its own) on SIGTERM
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        status = f"timed out after {LAUNCH_TIMEOUT}s"
    ranks = []
    for rank in range(NRANKS):
        path = os.path.join(results, f"rank{rank}.json")
        if not os.path.exists(path):
            tail = ""
            log = os.path.join(logs, f"workerlog.{rank}")
            if os.path.exists(log):
                tail = "".join(open(log, encoding="utf-8", errors="replace").readlines()[-15:])
            return None, f"{' '.join(cmd)}: {status}, rank {rank} wrote no result\n{tail}"
        with open(path, encoding="utf-8") as f:
            ranks.append(json.load(f))
    return ranks, ""


def library_call(binary, out):
    """library_call.py through `pylayer2static run --package sp_library`, in one process: the
    library's copy in DIR/library/site, the script in DIR/library/app (a project of its own, so
    the hook transpiles no module of this repository); None, or what is wrong."""
    root = os.path.join(out, "library")
    shutil.rmtree(root, ignore_errors=True)
    site, app = os.path.join(root, "site"), os.path.join(root, "app")
    shutil.copytree(os.path.join(HERE, "sp_library"), os.path.join(site, "sp_library"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    os.makedirs(app)
    shutil.copy(os.path.join(HERE, "library_call.py"), app)
    with open(os.path.join(app, "pyproject.toml"), "w", encoding="utf-8") as f:
        f.write('[project]\nname = "app"\n')
    path = [site, HERE, os.path.join(os.path.dirname(HERE), "e2e")] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    env = dict(os.environ, P2S_PYTHON=sys.executable, PYTHONPATH=os.pathsep.join(path),
               SOT_COLLECT_INFO="breakgraph_reason,subgraph_info")
    result = os.path.join(root, "result.json")
    cmd = [binary, "run", "--package", "sp_library", "library_call.py", result]
    try:
        proc = subprocess.run(cmd, cwd=app, env=env, capture_output=True, text=True, timeout=LAUNCH_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"{' '.join(cmd)}: timed out after {LAUNCH_TIMEOUT}s"
    if proc.returncode or not os.path.exists(result):
        return f"{' '.join(cmd)}: exit {proc.returncode}\n" + "\n".join(proc.stderr.splitlines()[-15:])
    with open(result, encoding="utf-8") as f:
        got = json.load(f)
    want = {"transpiled": True, "to_static": 1, "static": 1, "static_shape": [4, 2, 8]}
    if not got["paddle"].startswith("2."):  # 2.6.2's SOT runs every PyLayer call eagerly
        want.update(sot_subgraphs=[1], sot_breaks=[])
    wrong = {key: got.get(key) for key, value in want.items() if got.get(key) != value}
    if not got["builder"].startswith("_twin_builder"):
        wrong["builder"] = got["builder"]
    return wrong and f"got {wrong}, expected {want} and the runtime's twin builder"


# The sharded model against the serial one: the same sums in another order (matmuls split over
# ranks, then all-reduced), so float32 rounding differs a little.
SERIAL_TOLERANCE = (1e-5, 1e-6)


def same(got, want, tol=(harness.RTOL, harness.ATOL)):
    """None when `got` equals `want` within `tol` (tests/e2e's), else what differs."""
    try:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol[0], atol=tol[1])
    except AssertionError as exc:
        lines = [line for line in str(exc).splitlines() if line.strip()]
        return " ".join(lines[:3])
    return None


MODES = ("to_static", "sot")  # worker.py's STATIC_MODES: full_graph=True (AST) and False (SOT)


def training_difference(record, mode):
    """None when the `mode` run's losses and parameters equal eager's, else what differs."""
    static, eager = record[mode], record["eager"]
    if "error" in static:
        return static["error"]
    diff = same(static["losses"], eager["losses"])
    if diff:
        return f"losses differ: {diff}"
    for key, want in eager["params"].items():
        diff = same(static["params"][key], want)
        if diff:
            return f"parameter {key} differs: {diff}"
    return None


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, label, problem):
        if problem:
            self.failed += 1
            print(f"e2e-dist: FAIL {label}: {problem}")
        else:
            self.passed += 1
            print(f"e2e-dist: ok   {label}")
        return not problem


def cross_rank(name, ranks):
    """What must hold between the ranks of an eager run (the collectives are right)."""
    eager = [r["models"][name]["eager"] for r in ranks]
    if name in ("tensor_parallel_mlp", "paddle_sequence_parallel_mlp"):  # every rank: the whole sequence's loss
        diff = same(eager[1]["losses"], eager[0]["losses"])
        return diff and f"rank 1's losses are not rank 0's: {diff}"
    if name == "data_parallel_sync_bn":  # averaged gradients keep the replicas identical
        for key, want in eager[0]["params"].items():
            diff = same(eager[1]["params"][key], want)
            if diff:
                return f"the replicas of {key} differ after training: {diff}"
        return None
    if name == "expert_parallel_moe":  # the replicated gate stays replicated
        for key in eager[0]["params"]:
            if key.startswith("gate."):
                diff = same(eager[1]["params"][key], eager[0]["params"][key])
                if diff:
                    return f"the replicas of {key} differ after training: {diff}"
        return None
    raise KeyError(name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    args.out = os.path.abspath(args.out)  # the launches run in it
    os.makedirs(args.out, exist_ok=True)
    version = paddle.__version__
    checks = Checks()
    checks.check(f"{version}: a library module applying Paddle's ScatterOp, `pylayer2static run --package`, "
                 "builds one pylayer op (to_static, static program" + (")" if version.startswith("2.") else ", SOT)"),
                 library_call(os.path.abspath(args.bin), args.out))
    original = os.path.join(HERE, "models.py")
    transpiled = os.path.join(args.out, "models_p2s.py")
    proc = subprocess.run([args.bin, original, "-o", transpiled], capture_output=True, text=True)
    if not checks.check(f"{version}: pylayer2static models.py", proc.returncode and (proc.stderr or f"exit {proc.returncode}")):
        return 1

    runs = {}
    for variant in ("p2s", "framework"):
        ranks, problem = launch(variant, original, transpiled, args.out)
        runtime = ranks and ranks[0]["runtime_loaded"]
        if not problem and runtime != (variant == "p2s"):
            problem = f"the runtime was {'' if runtime else 'not '}imported"
        if checks.check(f"{version}: launch --nproc_per_node {NRANKS}, {variant}", problem):
            runs[variant] = ranks

    summary = {"paddle": version, "ir": "PIR" if version.startswith("3.") else "legacy Program IR", "models": {}}
    for name in PYLAYER_OPS:
        cells = {"covers": COVERS[name]}
        p2s = runs.get("p2s")
        if p2s:
            ok = checks.check(f"{version} {name}: the ranks agree (eager)", cross_rank(name, p2s))
            if "serial" in p2s[0]["models"][name]:
                for rank, result in enumerate(p2s):
                    record = result["models"][name]
                    diff = same(record["eager"]["losses"], record["serial"]["losses"], SERIAL_TOLERANCE)
                    ok &= checks.check(f"{version} {name} rank {rank}: eager losses equal the serial model's",
                                       diff and f"losses differ: {diff}")
            cells["eager"] = ("✅ runs, the ranks agree" + (", equals the serial model" if "serial" in
                              p2s[0]["models"][name] else "")) if ok else "❌ wrong values"
            for mode in MODES:
                problems = []
                for rank, result in enumerate(p2s):
                    record = result["models"][name]
                    diff = training_difference(record, mode)
                    if not diff and mode == "to_static" and record["pylayer_ops"] != PYLAYER_OPS[name]:
                        diff = f"{record['pylayer_ops']} pylayer ops in the program, expected {PYLAYER_OPS[name]}"
                    if not checks.check(f"{version} {name} rank {rank}: {mode} (transpiled) equals eager", diff):
                        problems.append(f"rank {rank}: {diff}")
                ops = f"{PYLAYER_OPS[name]} pylayer op{'s' if PYLAYER_OPS[name] > 1 else ''}"
                cells[f"p2s {mode}"] = ("✅ equal on both ranks" + (f" ({ops})" if mode == "to_static" else "")
                                        if not problems else "❌ " + "; ".join(problems))
            if "jit" in p2s[0]["models"][name]:
                problems = []
                for rank, result in enumerate(p2s):
                    jit = result["models"][name]["jit"]
                    diff = jit.get("error") or same(jit["loaded"], jit["eager"]) or same(jit["static"], jit["eager"])
                    # Exports hold the PyLayers' ops inlined (the runtime's inline.py, legacy.py).
                    if not diff and jit["pylayer_ops"]:
                        diff = f"the saved program keeps {jit['pylayer_ops']} pylayer op(s)"
                    if not checks.check(f"{version} {name} rank {rank}: jit.save, jit.load equals eager", diff):
                        problems.append(f"rank {rank}: {diff}")
                cells["jit"] = ("✅ equal on both ranks (one export per rank)"
                                if not problems else "❌ " + "; ".join(problems))
        framework = runs.get("framework")
        if p2s:
            problems = []
            for rank, result in enumerate(p2s):
                for mode, error in result["models"][name]["harness"].items():
                    if not checks.check(f"{version} {name} rank {rank}: harness {mode} (transpiled) equals eager", error):
                        problems.append(f"{mode}, rank {rank}: {error}")
            cells["harness"] = (f"✅ all {len(p2s[0]['models'][name]['harness'])} modes equal on both ranks"
                                if not problems else "❌ " + "; ".join(problems))
        for mode in MODES if framework else ():  # recorded, not checked: the framework's own path
            diffs = [training_difference(r["models"][name], mode) for r in framework]
            if not any(diffs):
                cells[f"framework {mode}"] = "✅ equal on both ranks"
            elif len(set(diffs)) == 1:
                cells[f"framework {mode}"] = f"❌ {diffs[0]}"
            else:
                cells[f"framework {mode}"] = "❌ " + "; ".join(f"rank {i}: {d or 'equal'}" for i, d in enumerate(diffs))
        summary["models"][name] = cells
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, ensure_ascii=False)
    print(f"e2e-dist: {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
