"""How long a transpiled model takes to build its static graph, against its built-in twin
(issue 34): the first `to_static` training step of a model of twins/ minus a later step, in a
fresh process for every measurement, since building is what a process pays once per model and
input shape. `sh tests/bench/construction.sh` runs it once per framework version.

    python construction.py BIN [--repeat N] [--out FILE]

Models: the LoRA LM of twins/lora_lm.py at each of its sizes with 2 and with 8 blocks, and the
chain of 48 small PyLayer calls of twins/chain.py. BIN transpiles each file; the PyLayer model
and its twin are both taken from the transpiled module. Each process first builds an unrelated
to_static function (the framework's own one-time start-up, which both pay alike), then the
model, and trains a few AdamW steps; the first step's losses of the two must agree to the
model's tolerance, or the run stops. Construction is given in CPU time of the main thread
(`time.thread_time`, where program building happens: wall times swing by 2x on a shared
machine, CPU times by some 10 %) and in wall time; each figure is the median over N processes,
the two kinds taking turns.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

from report import emit

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("transpiled", "twin")
# model file in twins/, block counts to build it with (None: as the file has it), target
MODELS = (("lora_lm", (2, 8), 1.3), ("chain", (None,), 1.5))
LATER_STEPS = 5

CHILD = r"""
import importlib.util, statistics, sys, time
import paddle
def warm(t):
    return paddle.tanh(t) * 2.0
paddle.jit.to_static(warm, full_graph=True)(paddle.ones([2])).numpy()
spec = importlib.util.spec_from_file_location("bench_construction", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules["bench_construction"] = module
spec.loader.exec_module(module)
if sys.argv[4] != "-":
    module.BLOCKS = int(sys.argv[4])
size = next(s for s in module.SIZES if s.name == sys.argv[3])
paddle.seed(0)
model = (module.PYLAYER if sys.argv[2] == "transpiled" else module.TWIN)(size)
opt = paddle.optimizer.AdamW(1e-3, parameters=[p for p in model.parameters() if not p.stop_gradient])
fn = paddle.jit.to_static(model, full_graph=True)
inputs = [paddle.to_tensor(a) for a in module.batch(size, 0)]
def step():
    start, cpu = time.perf_counter(), time.thread_time()
    loss = fn(*inputs)
    loss.backward()
    opt.step()
    opt.clear_grad()
    value = float(loss)
    return time.perf_counter() - start, time.thread_time() - cpu, value
first = step()
later = [step() for _ in range(%d)]
wall = statistics.median(w for w, _, _ in later)
cpu = statistics.median(c for _, c, _ in later)
print(first[0] - wall, first[1] - cpu, first[2])
""" % LATER_STEPS


def build_once(child: str, path: str, kind: str, size: str, blocks: Optional[int]) -> Tuple[float, float, float]:
    """Construction wall and CPU seconds and the first loss of one fresh process running the
    script `child` (a file: dy2static reads the source of what it converts)."""
    env = dict(os.environ, GLOG_minloglevel="2")
    proc = subprocess.run([sys.executable, child, path, kind, size, "-" if blocks is None else str(blocks)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit("construction.py: {} {} {} failed:\n{}".format(kind, size, blocks, proc.stderr[-3000:]))
    wall, cpu, loss = map(float, proc.stdout.split()[-3:])
    return wall, cpu, loss


def measure(child: str, path: str, size: str, blocks: Optional[int], repeat: int, rtol: float) -> Dict[str, Tuple[float, float]]:
    """Median (CPU, wall) construction seconds of each kind, the kinds taking turns."""
    runs: Dict[str, List[Tuple[float, float]]] = {kind: [] for kind in KINDS}
    losses: Dict[str, float] = {}
    for turn in range(repeat):
        for kind in (KINDS if turn % 2 == 0 else KINDS[::-1]):
            wall, cpu, loss = build_once(child, path, kind, size, blocks)
            runs[kind].append((cpu, wall))
            losses[kind] = loss
    if abs(losses["transpiled"] - losses["twin"]) > rtol * abs(losses["twin"]):
        raise SystemExit("construction.py: {} {}: first losses differ: transpiled {} twin {}".format(
            path, size, losses["transpiled"], losses["twin"]))
    return {kind: (statistics.median(c for c, _ in values), statistics.median(w for _, w in values))
            for kind, values in runs.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--repeat", type=int, default=3, help="processes of each kind (median of)")
    ap.add_argument("--out", help="append the table to this file instead of printing it")
    ap.add_argument("--models", nargs="*", help="only these models of twins/")
    args = ap.parse_args()
    import importlib.util
    import paddle

    lines = ["| model | size | blocks | construction CPU (ms): transpiled / twin | transpiled ÷ twin | "
             "wall (ms): transpiled / twin | wall ÷ twin | target | met |",
             "|---|---|---|---|---|---|---|---|---|"]
    met = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        child = os.path.join(tmp, "child.py")
        with open(child, "w") as f:
            f.write(CHILD)
        for name, block_counts, target in MODELS:
            if args.models and name not in args.models:
                continue
            path = os.path.join(tmp, name + ".py")
            subprocess.run([args.binary, os.path.join(HERE, "twins", name + ".py"), "-o", path], check=True)
            spec = importlib.util.spec_from_file_location("construction_sizes_" + name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            for blocks in block_counts:
                for size in module.SIZES:
                    figures = measure(child, path, size.name, blocks, args.repeat, module.RTOL)
                    (cpu_ours, wall_ours), (cpu_twin, wall_twin) = figures["transpiled"], figures["twin"]
                    ratio = cpu_ours / cpu_twin
                    ok = ratio <= target
                    met += ok
                    total += 1
                    line = "| {} | {} | {} | {:.0f} / {:.0f} | {:.2f} | {:.0f} / {:.0f} | {:.2f} | ≤ {} | {} |".format(
                        name, size.describe(), module.BLOCKS if blocks is None else blocks, cpu_ours * 1e3,
                        cpu_twin * 1e3, ratio, wall_ours * 1e3, wall_twin * 1e3, wall_ours / wall_twin, target,
                        "yes" if ok else "no")
                    print(line, file=sys.stderr, flush=True)   # progress
                    lines.append(line)
    head = ["### paddlepaddle {} (`{} tests/bench/construction.py BIN --repeat {}`, {} cores, {})".format(
        paddle.__version__, os.path.relpath(sys.executable, os.getcwd()), args.repeat, os.cpu_count(),
        time.strftime("%Y-%m-%d")), ""]
    emit(head + lines + ["", "{} of {} targets met.".format(met, total)], args.out)


if __name__ == "__main__":
    main()
