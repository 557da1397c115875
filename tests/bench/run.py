"""`make bench`: pylayer2static's speed and memory as ratios against baselines timed in the same run.

    python3 tests/bench/run.py BIN [--repeat N] [--instructions-only] [--write OUT.md]

Corpora (made under build/bench/ on first use): the CPython standard library of this machine
(its .py files outside the test suites), a generated PyLayer-heavy package tree and generated
PyLayer-heavy files of 1 KB to 50 MB (gen_pylayer.py). Baselines: `--parse-only` of the same
binary over the same input (same walk, same writes) and CPython's `ast.parse` + `ast.unparse`
over the same files (roundtrip.py: what a transpiler written in Python pays at least).

The machine is shared and noisy, so every figure is the best of N runs, and the runs of one
figure and of its baselines are interleaved (ours, parse-only, CPython, ours, ...): a ratio
compares runs made in the same moments. Everything lands in one table; instruction counts from
callgrind (the same on every run) back the ratios in a table of their own (`--instructions-only`
measures that one alone), and the language server's latency (lsp_bench.py, a short session)
closes the timings.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORK = os.path.join(ROOT, "build", "bench")
EXCLUDED_DIRS = {"site-packages", "test", "tests", "idle_test", "__pycache__"}
SIZES = (1_000, 10_000, 100_000, 1_000_000, 10_000_000, 50_000_000)
CPYTHON_MAX = 1_000_000   # CPython's round trip of bigger files takes minutes and gigabytes


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
    """A directory holding one generated file of about size bytes (CPython's round trip takes a
    directory), and the file."""
    folder = os.path.join(WORK, "sized", "f{}".format(size))
    path = os.path.join(folder, "f.py")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_pylayer.py"), "file", path, str(size)], check=True)
    return folder, path


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


def interleaved(commands, repeat):
    """Best (time, RSS, exit) of each command; argv_for(out_dir) builds each one. The commands
    take turns, so that the load of the machine weighs on all of them alike. Each run writes
    into a directory of its own, removed after the last run: creating files just after a tree
    was removed costs ext4 a scan of its recently deleted inodes (`recently_deleted`), under
    the directory's lock, which serializes -j2's workers (a -j1/-j2 of 1.4-1.6 against 1.9)."""
    results = {name: [] for name in commands}
    outs = []
    try:
        for _ in range(repeat):
            for name, argv_for in commands.items():
                outs.append(tempfile.mkdtemp(prefix="p2s-bench-", dir=WORK))
                results[name].append(timed(argv_for(outs[-1])))
    finally:
        for out in outs:
            shutil.rmtree(out, ignore_errors=True)
    return {name: min(runs) for name, runs in results.items()}


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


class Table:
    """The one table: each figure with its ratios to parse-only and CPython, and its target."""

    HEAD = ("| figure | best (s) | × parse-only | × CPython | peak RSS (MiB) | RSS × parse-only | target | measured | met |\n"
            "|---|---|---|---|---|---|---|---|---|")

    def __init__(self):
        self.rows = []

    def add(self, figure, ours, parse=None, cpython=None, target=None):
        """ours/parse/cpython: (time, RSS KiB, exit) or None; target: (text, measured, met) or None."""
        def ratio(base, index):
            return "{:.2f}".format(ours[index] / base[index]) if base and base[index] else "—"
        secs = "{:.4f}".format(ours[0]) if ours[0] < 1 else "{:.3f}".format(ours[0])
        text, measured, met = target if target else ("", "", None)
        self.rows.append("| {} | {} | {} | {} | {:.1f} | {} | {} | {} | {} |".format(
            figure, secs, ratio(parse, 0), ratio(cpython, 0), ours[1] / 1024, ratio(parse, 1), text, measured,
            "" if met is None else ("yes" if met else "**no**")))

    def text(self):
        return self.HEAD + "\n" + "\n".join(self.rows)


def tree_rows(table, binary, label, tree, repeat):
    files = py_files(tree)
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    runs = interleaved({
        "j1": lambda out: [binary, tree, "-o", out, "-j1"],
        "parse j1": lambda out: [binary, tree, "-o", out, "-j1", "--parse-only"],
        "cpython": lambda out: [sys.executable, os.path.join(HERE, "roundtrip.py"), tree, out],
        "j2": lambda out: [binary, tree, "-o", out, "-j2"],
        "parse j2": lambda out: [binary, tree, "-o", out, "-j2", "--parse-only"],
    }, repeat)
    j1, j2, parse, cpython = runs["j1"], runs["j2"], runs["parse j1"], runs["cpython"]
    heavy = label != "stdlib"
    vs_parse, vs_cpython = (2.0, 1 / 1.5) if heavy else (1 / 0.9, 1 / 3.0)
    name = "{} tree ({} files, {:.1f} MB)".format(label, len(files), mb)
    table.add(name + " -j1", j1, parse, cpython,
              ("× parse-only ≤ {:.2f}, × CPython ≤ {:.2f}".format(vs_parse, vs_cpython),
               "{:.2f}, {:.2f}".format(j1[0] / parse[0], j1[0] / cpython[0]),
               j1[0] / parse[0] <= vs_parse and j1[0] / cpython[0] <= vs_cpython))
    table.add(name + " -j2", j2, runs["parse j2"], None,
              ("-j1 / -j2 ≥ 1.8", "{:.2f}".format(j1[0] / j2[0]), j1[0] / j2[0] >= 1.8))
    return max(r[1] for r in (j1, j2)), max(os.path.getsize(f) for f in files)


def size_rows(table, binary, repeat):
    per_kb = {}
    for size in SIZES:
        folder, path = sized_file(size)
        actual = os.path.getsize(path)
        commands = {
            "ours": lambda out: [binary, path, "-o", os.path.join(out, "o.py")],
            "parse": lambda out: [binary, "--parse-only", path, "-o", os.path.join(out, "o.py")],
        }
        if size <= CPYTHON_MAX:
            commands["cpython"] = lambda out: [sys.executable, os.path.join(HERE, "roundtrip.py"), folder, out]
        runs = interleaved(commands, repeat if size <= 1_000_000 else 2)
        ours, parse = runs["ours"], runs["parse"]
        per_kb[size] = ours[0] * 1e6 / (actual / 1e3)
        target = None
        if size == 100_000:
            target = ("× parse-only ≤ 1.5", "{:.2f}".format(ours[0] / parse[0]), ours[0] / parse[0] <= 1.5)
        elif size >= 1_000_000:
            rss = ours[1] / parse[1]
            target = ("RSS × parse-only ≤ 1.2", "{:.2f}".format(rss), rss <= 1.2)
        table.add("one file, {:.0f} KB".format(actual / 1e3), ours, parse, runs.get("cpython"), target)
    return per_kb[SIZES[-1]] / per_kb[1_000_000]


def lsp_row(table, binary):
    """A short language-server session (the full one, with 10,000 edits and valgrind, is
    lsp_bench.py's own run in `make bench`)."""
    sys.path.insert(0, HERE)
    import lsp_bench
    _, path = sized_file(100_000)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    # Two places: a model's forward, whose edits the server keeps the diagnostics of
    # (src/lsp_reuse.h), and a PyLayer's backward, which the checks read: analyzed in full.
    for where, at in (("in a model's forward", "h = self.linear(x)"), ("in a PyLayer's backward", "grad = dy")):
        best = None
        for _ in range(3):
            _, latencies, _, _, _ = lsp_bench.session(pin + [binary, "lsp"], text, 300, set(), at)
            median = statistics.median(latencies)
            best = median if best is None else min(best, median)
        table.rows.append("| language server: didChange → publishDiagnostics, one-character edit {}, 100 KB file, "
                          "one core (median of 300 edits, best of 3 sessions) | {:.4f} | | | | | median ≤ 10 ms | "
                          "{:.1f} ms | {} |".format(where, best / 1e3, best, "yes" if best <= 10 else "**no**"))


def instruction_rows(binary, say):
    """The instruction-count table, between markers of its own, so that `make bench-instructions`
    rewrites it alone: each input transpiled against its `--parse-only` run. A tree runs at -j1
    into a fresh directory; a single file's output goes to /dev/null."""
    say("<!-- instructions: begin -->")
    say("## Instruction counts (callgrind; the same on every run of the same binary)")
    say()
    say("Counted by `make bench-instructions` (`python3 tests/bench/run.py build/pylayer2static --instructions-only`), {}."
        .format(time.strftime("%Y-%m-%d")))
    say()
    say("| input | transpile | parse-only | × parse-only | target | met |")
    say("|---|---|---|---|---|---|")
    heavy = heavy_corpus()
    rows = (("stdlib `_pydecimal.py`", os.path.join(stdlib_corpus(), "_pydecimal.py"), None),
            ("PyLayer-heavy tree (101 files) `-j1`", heavy, 2.0),
            ("one file whose imports reach a 50-module chain (the heavy tree's `m50.py`, alone)",
             os.path.join(heavy, "heavy", "m50.py"), 5.0),
            ("100 KB PyLayer-heavy file", sized_file(100_000)[1], None))
    for label, path, bound in rows:
        counts = []
        for extra in ([], ["--parse-only"]):
            with tempfile.TemporaryDirectory(dir=WORK) as out:
                dest = ["-o", out, "-j1"] if os.path.isdir(path) else ["-o", "/dev/null"]
                counts.append(callgrind([binary, path] + dest + extra))
        full, parse = counts
        if not (full and parse):
            say("| {} | valgrind not installed | | | | |".format(label))
            continue
        ratio = full / parse
        target = "× parse-only ≤ {:.1f}".format(bound) if bound else ""
        met = ("yes" if ratio <= bound else "**no**") if bound else ""
        say("| {} | {:,} | {:,} | {:.2f} | {} | {} |".format(label, full, parse, ratio, target, met))
    say("<!-- instructions: end -->")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write", metavar="DOC")
    ap.add_argument("--instructions-only", action="store_true",
                    help="only the instruction-count table (write_doc.py --instructions puts it in the doc)")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    os.makedirs(WORK, exist_ok=True)
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    if args.instructions_only:
        instruction_rows(binary, say)
        if args.write:
            with open(args.write, "w") as f:
                f.write("\n".join(lines) + "\n")
        return

    say("Measured by `make bench` (`python3 tests/bench/run.py build/pylayer2static --repeat {}`) on {} cores, {}."
        .format(args.repeat, os.cpu_count(), time.strftime("%Y-%m-%d")))
    say("Each time is the best of {} runs (2 for files of 10 MB and more), taken in turns with its baselines; "
        "× columns divide our figure by the baseline's (below 1 is faster or smaller).".format(args.repeat))
    say()
    table = Table()
    bounds = []
    for label, tree in (("stdlib", stdlib_corpus()), ("PyLayer-heavy", heavy_corpus())):
        peak, largest = tree_rows(table, binary, label, tree, args.repeat)
        bounds.append((label, peak, largest))
    growth = size_rows(table, binary, args.repeat)
    lsp_row(table, binary)
    say(table.text())
    say()
    for label, peak, largest in bounds:
        bound = (32 * largest) / 2**20 + 32
        say("Peak RSS of the {} tree runs {:.1f} MiB; bound 32 × largest file ({:.0f} KB) + 32 MiB = {:.1f} MiB: {}."
            .format(label, peak / 1024, largest / 1e3, bound, "met" if peak / 1024 <= bound else "NOT met"))
    say("Growth: µs per KB at 50 MB / at 1 MB = {:.2f} (1.0 is linear; process start-up dominates the small sizes)."
        .format(growth))

    say()
    instruction_rows(binary, say)
    if args.write:
        with open(args.write, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
