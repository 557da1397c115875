"""stress.py BIN — PaddlePaddle's own dy2static PyLayer tests, transpiled, run many times.

The crash of docs/RELIABILITY.md ("A segfault in PIR autodiff") shows in about one run in
45 of the transpiled `dygraph_to_static/test_pylayer.py`, so one conformance run says
little. This runs that file N times, each run a fresh `runner.py` process (the conformance
suite's runner: per-test records, so a crash names the test that was running), with busy
processes beside it, and counts:

  crashes           a run that died by a signal (SIGSEGV, SIGABRT...), with the test running;
  unexpected errors a test that failed or errored and is not an expected difference of this
                    version in tests/conformance/expected_differences.txt;
  timeouts          a run that did not end in --timeout seconds.

Last line: `stress: R runs, C crashes, E unexpected errors, T timeouts`; exit 1 unless all
three are 0. Not part of `make check` (`make stress`, default 200 runs).

  --runs N          runs (default 200)
  --load K          busy-loop processes beside each run (default 2: the machine's cores)
  --venv DIR        the venv whose paddle runs the tests (default .venv, paddlepaddle 3.3.1);
                    its version picks the test tree (paddle-3 for 3.x, as conformance.py)
  --untranspiled    run the framework's own copy instead: the same counts for its own path
  --perturb         run with glibc's malloc perturbation (GLIBC_TUNABLES=glibc.malloc.perturb=170):
                    freed memory is overwritten at once, so a read of freed memory crashes
                    far more often (docs/RELIABILITY.md says why this matters here)
  --timeout S       seconds per run (default 600)

Standard library only.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))

import conformance  # noqa: E402  (its tree layout, shim, transpile step and expected differences)

TEST_FILE = "dygraph_to_static/test_pylayer.py"
MODULE = "test_pylayer"
BUSY = "while True:\n    pass\n"


def _framework_version(python):
    probe = subprocess.run([python, "-c", "import paddle; print(paddle.__version__)"],
                           capture_output=True, text=True, errors="replace", timeout=300)
    lines = probe.stdout.strip().splitlines()
    if probe.returncode != 0 or not lines:
        raise SystemExit("stress: %s has no working paddle (run 'make venv'):\n%s" % (
            python, probe.stderr[-2000:]))
    return lines[-1].strip()


def _prepare(binary, version, work, untranspiled):
    """The test tree copied into `work`, shimmed as conformance.py does, the test file
    transpiled unless `untranspiled`; the test file's folder."""
    tree = "paddle-2.6" if conformance.version_tuple(version)[0] == 2 else "paddle-3"
    src = os.path.join(os.environ.get("P2S_PADDLE_TESTS", os.path.join(ROOT, "tests", "conformance",
                                                                       "paddle-tests")), tree, "test")
    dst = os.path.join(work, "test")
    conformance.copy_tree(src, dst)
    if conformance.needs_shim(tree, version):
        with open(os.path.join(dst, conformance.SHIM_FILE), "a", encoding="utf-8") as f:
            f.write(conformance.SHIM)
    path = os.path.join(dst, TEST_FILE)
    if not untranspiled:
        ok, message = conformance.transpile(binary, path)
        if not ok:
            raise SystemExit("stress: " + message)
    return os.path.dirname(path)


def _expected(version):
    entries = conformance.read_expected(os.path.join(ROOT, "tests", "conformance", "expected_differences.txt"))
    return {test for (pattern, test) in entries if conformance.version_matches(pattern, version)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--load", type=int, default=2)
    parser.add_argument("--venv", default=".venv")
    parser.add_argument("--untranspiled", action="store_true")
    parser.add_argument("--perturb", action="store_true")
    parser.add_argument("--timeout", type=int, default=600)
    args = parser.parse_args(argv)
    binary = os.path.abspath(args.binary)
    python = os.path.join(ROOT, args.venv, "bin", "python")
    if not os.path.exists(python):
        raise SystemExit("stress: %s is missing (run 'make venv')" % python)
    version = _framework_version(python)
    expected = _expected(version)
    if args.perturb:  # conformance.Run passes this process's environment on
        os.environ["GLIBC_TUNABLES"] = "glibc.malloc.perturb=170"
    work = tempfile.mkdtemp(prefix="p2s-stress-")
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.load)]
    crashes = unexpected = timeouts = 0
    started = time.time()
    try:
        folder = _prepare(binary, version, work, args.untranspiled)
        print("stress: paddlepaddle %s (%s), %s copy of %s, %d runs, %d busy processes%s" % (
            version, args.venv, "untranspiled" if args.untranspiled else "transpiled", TEST_FILE,
            args.runs, args.load, ", malloc perturbation" if args.perturb else ""), flush=True)
        for n in range(1, args.runs + 1):
            run = conformance.Run(python, os.path.join(folder, MODULE + ".py"), "transpiled")(args.timeout)
            running = next((t for t, (o, _) in run.results.items() if o == "crash"), None)
            if run.status is None:
                timeouts += 1
                print("stress: run %d %s" % (n, run.problem.split(";")[0]), flush=True)
            elif run.status < 0:
                crashes += 1
                print("stress: run %d died by %s during %s" % (
                    n, signal.Signals(-run.status).name, running), flush=True)
            bad = sorted((t, d) for t, (o, d) in run.results.items() if o in ("fail", "error") and t not in expected)
            unexpected += len(bad)
            for test, detail in bad:
                lines = [line for line in detail.strip().splitlines() if line.strip()]
                print("stress: run %d: unexpected %s: %s" % (n, test, lines[-1][:300] if lines else "?"), flush=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("stress: %d runs in %.0f s" % (args.runs, time.time() - started))
    print("stress: %d runs, %d crashes, %d unexpected errors, %d timeouts" % (
        args.runs, crashes, unexpected, timeouts))
    return 0 if crashes == unexpected == timeouts == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
