"""Program construction time: our path vs the framework's own dy2static PyLayer path.

    python tests/e2e/bench_construction.py [REPEATS]

For the request's example (cases/request_full.py, run through the framework's own
`StaticPyLayer`, and its transpiled copy, run through pylayer2static_runtime) this
times the first call of `paddle.jit.to_static(model, full_graph=True)` - program
construction (forward program, plus the backward program the first training call
builds) and one run - minus the second call (the run alone). Each measurement is a
fresh process, after an unrelated to_static warm-up, so no cache is shared; the
median over REPEATS processes (default 5) is printed.
"""
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

CHILD = r"""
import sys, time
sys.path.insert(0, {here!r})
import numpy as np, paddle, harness
def warm(t):
    return paddle.tanh(t) * 2.0
paddle.jit.to_static(warm, full_graph=True)(paddle.ones([2])).numpy()
module = harness.load_module({path!r}, "bench_case")
paddle.seed(0)
fn = paddle.jit.to_static(module.Model(), full_graph=True)
x = paddle.to_tensor(np.random.RandomState(0).standard_normal([2, 4]).astype("float32"))
x.stop_gradient = False
def step():
    start = time.perf_counter()
    fn(x).backward()
    return time.perf_counter() - start
first, second = step(), step()
print(first - second)
"""


def measure(path: str, python: str, repeats: int) -> float:
    times = []
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(CHILD.format(here=HERE, path=path))  # dy2static needs source files
    try:
        for _ in range(repeats):
            proc = subprocess.run([python, script.name], capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr)
            times.append(float(proc.stdout.strip().splitlines()[-1]))
    finally:
        os.unlink(script.name)
    return statistics.median(times)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    import paddle

    framework = measure(os.path.join(HERE, "cases", "request_full.py"), sys.executable, repeats)
    binary = os.environ.get("P2S_BIN", os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "pylayer2static"))
    with tempfile.TemporaryDirectory() as tmp:
        transpiled = os.path.join(tmp, "request_full.py")
        subprocess.run([binary, os.path.join(HERE, "cases", "request_full.py"), "-o", transpiled], check=True)
        ours = measure(transpiled, sys.executable, repeats)
    print(f"paddle {paddle.__version__}: first-call construction, median of {repeats} processes")
    print(f"  framework's own path (StaticPyLayer): {framework * 1000:8.1f} ms")
    print(f"  pylayer2static runtime              : {ours * 1000:8.1f} ms  ({ours / framework:.2f}x)")


if __name__ == "__main__":
    main()
