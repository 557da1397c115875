"""`make bench`: pylayer2static's speed as ratios against baselines timed in the same run.

    python3 tests/bench/run.py BIN [--repeat N] [--write docs/PERFORMANCE.md]

Corpora (made under build/bench/ on first use): the CPython standard library of this machine
(its .py files outside the test suites) and a generated PyLayer-heavy package tree
(gen_pylayer.py). Each figure is the best of N runs (default 5) into a fresh output directory,
so every run does the same I/O. Baselines: `--parse-only` of the same binary over the same tree
(same walk, same writes) and CPython's `ast.parse` + `ast.unparse` over the same files
(roundtrip.py: what a transpiler written in Python pays at least). Instruction counts from
callgrind back the ratios where valgrind is installed.
"""
import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORK = os.path.join(ROOT, "build", "bench")
EXCLUDED_DIRS = {"site-packages", "test", "tests", "idle_test", "__pycache__"}


def stdlib_corpus():
    dest = os.path.join(WORK, "stdlib")
    if os.path.isdir(dest):
        return dest
    src = sysconfig.get_paths()["stdlib"]
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS)
        for name in files:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(root, name), src)
                os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
                shutil.copyfile(os.path.join(root, name), os.path.join(tmp, rel))
    os.rename(tmp, dest)
    return dest


def heavy_corpus():
    dest = os.path.join(WORK, "heavy")
    if not os.path.isdir(dest):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_pylayer.py"), "tree", dest + ".tmp", "100", "10"], check=True)
        os.rename(dest + ".tmp", dest)
    return dest


def sized_file(size):
    path = os.path.join(WORK, "sized", "f{}.py".format(size))
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_pylayer.py"), "file", path, str(size)], check=True)
    return path


def py_files(tree):
    out = []
    for root, _, files in os.walk(tree):
        out.extend(os.path.join(root, f) for f in files if f.endswith(".py"))
    return out


def timed(argv):
    """(wall seconds, peak RSS in KiB, exit code) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def best(argv_for, repeat):
    """Best wall time and the peak RSS of that run; argv_for(out_dir) builds each command."""
    results = []
    for _ in range(repeat):
        out = tempfile.mkdtemp(prefix="p2s-bench-", dir=WORK)
        try:
            results.append(timed(argv_for(out)))
        finally:
            shutil.rmtree(out, ignore_errors=True)
    return min(results)


def callgrind(argv):
    if not shutil.which("valgrind"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in proc.stderr.splitlines():
            if "Collected :" in line:
                return int(line.split(":")[-1].strip())
    return None


def tree_table(binary, tree, repeat, rows):
    files = py_files(tree)
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    runs = {
        "tree -j1": best(lambda out: [binary, tree, "-o", out, "-j1"], repeat),
        "tree -j2": best(lambda out: [binary, tree, "-o", out, "-j2"], repeat),
        "--parse-only -j1": best(lambda out: [binary, tree, "-o", out, "-j1", "--parse-only"], repeat),
        "CPython ast round trip": best(lambda out: [sys.executable, os.path.join(HERE, "roundtrip.py"), tree, out], repeat),
    }
    for name, (secs, rss, code) in runs.items():
        rows.append((name, secs, mb / secs, len(files) / secs, rss / 1024, code))
    j1, j2, parse, cpy = (runs[k][0] for k in runs)
    return len(files), mb, {"tree / parse-only throughput (-j1)": parse / j1,
                            "tree -j1 vs CPython round trip (times faster)": cpy / j1,
                            "-j2 / -j1 throughput": j1 / j2}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write", metavar="DOC")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    os.makedirs(WORK, exist_ok=True)
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    say("Measured by `make bench` (`python3 tests/bench/run.py build/pylayer2static --repeat {}`) on {} cores, {}."
        .format(args.repeat, os.cpu_count(), time.strftime("%Y-%m-%d")))
    say("Each time is the best of {} runs; ratios compare figures of the same run.".format(args.repeat))
    targets = {
        "stdlib": {"tree / parse-only throughput (-j1)": 0.9, "tree -j1 vs CPython round trip (times faster)": 3.0,
                   "-j2 / -j1 throughput": 1.7},
        "PyLayer-heavy": {"tree / parse-only throughput (-j1)": 0.5, "tree -j1 vs CPython round trip (times faster)": 1.5,
                          "-j2 / -j1 throughput": 1.7},
    }
    for label, tree in (("stdlib", stdlib_corpus()), ("PyLayer-heavy", heavy_corpus())):
        rows = []
        count, mb, ratios = tree_table(binary, tree, args.repeat, rows)
        largest = max(os.path.getsize(f) for f in py_files(tree))
        say()
        say("## {}: {} files, {:.1f} MB".format(label, count, mb))
        say()
        say("| run | best time (s) | MB/s | files/s | peak RSS (MiB) | exit |")
        say("|---|---|---|---|---|---|")
        for name, secs, mbs, fps, rss, code in rows:
            say("| {} | {:.3f} | {:.1f} | {:.0f} | {:.1f} | {} |".format(name, secs, mbs, fps, rss, code))
        say()
        say("| ratio | measured | target | met |")
        say("|---|---|---|---|")
        for name, value in ratios.items():
            target = targets[label][name]
            say("| {} | {:.2f} | ≥ {} | {} |".format(name, value, target, "yes" if value >= target else "no"))
        rss_bound = (32 * largest) / 2**20 + 32
        peak = max(r[4] for r in rows[:3])
        say()
        say("Peak RSS of our runs {:.1f} MiB; bound 32 × largest file ({:.0f} KB) + 32 MiB = {:.1f} MiB: {}."
            .format(peak, largest / 1e3, rss_bound, "met" if peak <= rss_bound else "NOT met"))

    say()
    say("## Time against file size (one generated PyLayer-heavy file, `-o FILE`)")
    say()
    say("| size | transpile (s) | parse-only (s) | transpile / parse-only | µs per KB | peak RSS (MiB) | RSS / size |")
    say("|---|---|---|---|---|---|---|")
    per_kb = {}
    for size in (1_000, 10_000, 100_000, 1_000_000, 10_000_000, 50_000_000):
        path = sized_file(size)
        actual = os.path.getsize(path)
        rep = args.repeat if size <= 1_000_000 else 2
        full = best(lambda out: [binary, path, "-o", os.path.join(out, "o.py")], rep)
        parse = best(lambda out: [binary, "--parse-only", path, "-o", os.path.join(out, "o.py")], rep)
        per_kb[size] = full[0] * 1e6 / (actual / 1e3)
        say("| {:.0f} KB | {:.4f} | {:.4f} | {:.2f} | {:.1f} | {:.1f} | {:.1f} |".format(
            actual / 1e3, full[0], parse[0], full[0] / parse[0], per_kb[size], full[1] / 1024, full[1] * 1024 / actual))
    say()
    say("Growth: µs per KB at 50 MB / at 1 MB = {:.2f} (1.0 is linear; process start-up dominates the small sizes)."
        .format(per_kb[50_000_000] / per_kb[1_000_000]))

    say()
    say("## Instruction counts (callgrind; the same on every run of the same binary)")
    say()
    say("| input | transpile | parse-only | ratio |")
    say("|---|---|---|---|")
    for label, path in (("stdlib `_pydecimal.py`", os.path.join(stdlib_corpus(), "_pydecimal.py")),
                        ("PyLayer-heavy module `m50.py` (single file)", os.path.join(heavy_corpus(), "heavy", "m50.py")),
                        ("100 KB PyLayer-heavy file", sized_file(100_000))):
        full = callgrind([binary, path, "-o", "/dev/null"])
        parse = callgrind([binary, "--parse-only", path, "-o", "/dev/null"])
        if full and parse:
            say("| {} | {:,} | {:,} | {:.2f} |".format(label, full, parse, full / parse))
        else:
            say("| {} | valgrind not installed | | |".format(label))
    if args.write:
        with open(args.write, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
