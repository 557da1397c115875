"""What recompute saves in a static graph, and what it costs (issue 45): peak host memory and
training step of 8 pre-LN transformer blocks (hidden 512, batch 32, sequence 64) under
`to_static` (AST), each block recomputed (a CheckpointFunction-style PyLayer; fleet's
`recompute`, reentrant and not) against the same model without recompute; where SOT records
recompute as one call of its graph (paddle 3.3.1, `paddle.jit.marker.unified`), the PyLayer and
fleet's non-reentrant form under SOT (`full_graph=False`) against SOT's run without recompute
too (the PyLayer ran eagerly there before, and SOT inlined fleet's non-reentrant form, its saving
lost; the reentrant one is the same op there).
`sh tests/bench/recompute.sh` runs it once per framework version.

    python recompute.py BIN [--repeat N] [--out FILE]

Each figure comes from a fresh process (`BIN run tests/e2e/special/recompute_memory.py FORM
HIDDEN BATCH TO_STATIC`):
memory is Paddle's host allocator peak (`core.host_memory_stat_peak_value("Allocated", 0)`), the
step the median of the steps after the first, in the process's CPU time (all threads: wall times
swing by 1.5x on a shared 2-core machine) and in wall time; each is the median over N processes,
the forms taking turns. Losses must equal the plain run's, or the run stops. Targets: memory ≤ 0.6× and
step (CPU) ≤ 1.35× the run without recompute, under the executor's default settings.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Tuple

from report import emit

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "e2e", "special", "recompute_memory.py")
AST_FORMS = (("none", "ast"), ("user", "ast"), ("fleet", "ast"), ("fleet_nr", "ast"))
SOT_FORMS = (("none", "sot"), ("user", "sot"), ("fleet_nr", "sot"))
LABELS = {"user": "CheckpointFunction-style PyLayer", "fleet": "fleet recompute (reentrant)",
          "fleet_nr": "fleet recompute (use_reentrant=False)"}
HIDDEN, BATCH = 512, 32
MEMORY_TARGET, STEP_TARGET = 0.6, 1.35


def run_once(binary: str, form: Tuple[str, str]) -> dict:
    env = dict(os.environ, P2S_PYTHON=sys.executable, GLOG_minloglevel="2")
    proc = subprocess.run([binary, "run", SCRIPT, form[0], str(HIDDEN), str(BATCH), form[1]], capture_output=True,
                          text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"recompute.py: {' '.join(form)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def label(form: Tuple[str, str]) -> str:
    name = LABELS.get(form[0], form[0])
    return name if form[1] == "ast" else f"{name}, SOT"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--repeat", type=int, default=3, help="processes of each form (median of)")
    ap.add_argument("--out", help="append the table to this file instead of printing it")
    args = ap.parse_args()
    import paddle

    groups = [AST_FORMS] + ([SOT_FORMS] if hasattr(getattr(paddle.jit, "marker", None), "unified") else [])
    forms = [form for group in groups for form in group]
    runs: Dict[Tuple[str, str], List[dict]] = {form: [] for form in forms}
    for turn in range(args.repeat):
        for form in (forms if turn % 2 == 0 else forms[::-1]):
            runs[form].append(run_once(args.binary, form))
    plain = runs[AST_FORMS[0]][0]["losses"]
    for form, values in runs.items():
        for got in values:
            if any(abs(a - b) > 1e-5 * abs(b) for a, b in zip(got["losses"], plain)):
                raise SystemExit(f"recompute.py: {' '.join(form)}: losses {got['losses']} differ from {plain}")
    peak = {form: statistics.median(r["peak_mb"] for r in values) for form, values in runs.items()}
    step = {form: statistics.median(r["step_cpu_s"] for r in values) for form, values in runs.items()}
    wall = {form: statistics.median(r["step_s"] for r in values) for form, values in runs.items()}
    lines = ["| recompute | peak memory (MB) | ÷ no recompute | step CPU (ms) | ÷ no recompute | step wall (ms) | ÷ no recompute | targets | met |",
             "|---|---|---|---|---|---|---|---|---|"]
    met = 0
    for none, *recomputed in groups:
        lines.append("| {} | {:.0f} | 1.00 | {:.0f} | 1.00 | {:.0f} | 1.00 | | |".format(
            label(none), peak[none], step[none] * 1e3, wall[none] * 1e3))
        for form in recomputed:
            memory, time_ratio = peak[form] / peak[none], step[form] / step[none]
            ok = memory <= MEMORY_TARGET and time_ratio <= STEP_TARGET
            met += ok
            lines.append("| {} | {:.0f} | {:.2f} | {:.0f} | {:.2f} | {:.0f} | {:.2f} | ≤ {} / ≤ {} | {} |".format(
                label(form), peak[form], memory, step[form] * 1e3, time_ratio, wall[form] * 1e3, wall[form] / wall[none],
                MEMORY_TARGET, STEP_TARGET, "yes" if ok else "no"))
    head = ["### paddlepaddle {} (`{} tests/bench/recompute.py BIN --repeat {}`, {} cores, {})".format(
        paddle.__version__, os.path.relpath(sys.executable, os.getcwd()), args.repeat, os.cpu_count(),
        time.strftime("%Y-%m-%d")), ""]
    emit(head + lines + ["", "{} of {} forms meet both targets.".format(met, len(forms) - len(groups))], args.out)


if __name__ == "__main__":
    main()
