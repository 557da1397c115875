"""Program construction and training-step time of transpiled models, against eager mode and
the framework's own to_static PyLayer path (`sh tests/bench/models.sh`, once per framework).

    python models.py BIN [--repeat N] [--out FILE]

For the request's model (the e2e case tests/e2e/cases/request_full.py) and each model in
models/: the original module eagerly, the original under
`paddle.jit.to_static(full_graph=True)` (the framework's own PyLayer path) and the module
transpiled by BIN under the same to_static. Each measurement is a fresh process: the first
training step (forward, backward, SGD step) minus a later one is the construction time; the
median of 50 later steps is the step time. Figures are medians over N processes. Construction
is also given in CPU time of the main thread (`time.thread_time`), where program building
happens: wall times swing by 2× on this shared machine, CPU times by some 10 %.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from report import emit

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = r"""
import importlib.util, statistics, sys, time
import numpy as np, paddle
spec = importlib.util.spec_from_file_location("bench_model", {path!r})
module = importlib.util.module_from_spec(spec)
sys.modules["bench_model"] = module
spec.loader.exec_module(module)
paddle.seed(0)
model = module.Model()
opt = paddle.optimizer.SGD(0.001, parameters=model.parameters())
fn = model if {eager!r} else paddle.jit.to_static(model, full_graph=True)
x = paddle.to_tensor(np.random.RandomState(0).standard_normal(module.INPUTS[0][0]).astype("float32"))
def step():
    start, cpu = time.perf_counter(), time.thread_time()
    loss = fn(x)
    loss.backward()
    opt.step()
    opt.clear_grad()
    loss.numpy()
    return time.perf_counter() - start, time.thread_time() - cpu
first = step()
later = [step() for _ in range(50)]
wall, cpu = statistics.median(w for w, _ in later), statistics.median(c for _, c in later)
print(first[0] - wall, wall, first[1] - cpu)
"""


def measure(path, eager, repeat):
    constructions, steps, cpus = [], [], []
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(CHILD.format(path=path, eager=eager))
    try:
        for _ in range(repeat):
            proc = subprocess.run([sys.executable, script.name], capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr[-3000:])
            c, s, cpu = map(float, proc.stdout.split()[-3:])
            constructions.append(c)
            steps.append(s)
            cpus.append(cpu)
    finally:
        os.unlink(script.name)
    return statistics.median(constructions), statistics.median(steps), statistics.median(cpus)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    import paddle

    lines = ["### paddlepaddle {} (`{} tests/bench/models.py BIN --repeat {}`)".format(
        paddle.__version__, os.path.relpath(sys.executable, os.getcwd()), args.repeat), "",
        "| model | eager step (ms) | framework to_static: construction / step (ms) | pylayer2static: construction / step (ms) | construction: ours / framework | construction CPU (ms): framework / ours | construction CPU: ours / framework | step: ours / framework | step: ours / eager |",
        "|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        models = [os.path.join(HERE, "models", n) for n in sorted(os.listdir(os.path.join(HERE, "models")))
                  if n.endswith(".py")]
        models.insert(0, os.path.join(os.path.dirname(HERE), "e2e", "cases", "request_full.py"))
        for original in models:
            name = os.path.basename(original)
            transpiled = os.path.join(tmp, name)
            subprocess.run([args.binary, original, "-o", transpiled], check=True)
            _, eager_step, _ = measure(original, True, args.repeat)
            fw_c, fw_s, fw_cpu = measure(original, False, args.repeat)
            our_c, our_s, our_cpu = measure(transpiled, False, args.repeat)
            lines.append("| {} | {:.2f} | {:.1f} / {:.2f} | {:.1f} / {:.2f} | {:.2f} | {:.1f} / {:.1f} | {:.2f} | {:.2f} | {:.2f} |".format(
                name[:-3], eager_step * 1e3, fw_c * 1e3, fw_s * 1e3, our_c * 1e3, our_s * 1e3,
                our_c / fw_c, fw_cpu * 1e3, our_cpu * 1e3, our_cpu / fw_cpu, our_s / fw_s, our_s / eager_step))
            print(lines[-1], flush=True)
    emit(lines, args.out)


if __name__ == "__main__":
    main()
