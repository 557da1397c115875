"""Benchmark of `pylayer2static lsp` (not a timed test; `make bench` runs it).

    python3 tests/bench/lsp_bench.py BIN [--edits 10000] [--bytes 100000] [--no-valgrind] [--wrap CMD] [--at TEXT]

A PyLayer-dense file of about --bytes (tests/bench/gen_pylayer.py, some 3,000 lines at 100 KB)
is opened; then --edits one-character edits alternately insert and delete a character on a
line past the middle of the file, after the first character of --at: by default in a model's
forward, an edit whose diagnostics the server keeps (src/lsp_reuse.h); `--at "grad = dy"` puts
it in a PyLayer's backward, which the checker reads, so every edit is analyzed in full. Each
edit is sent alone and the client waits for the publishDiagnostics of its version: the latency
is the time from writing didChange to reading its diagnostics. The server runs on one core
(taskset -c 0 when available). The RSS of the server (VmRSS) is sampled along the way: it must
stay flat. A short session under valgrind memcheck ends it (skipped without valgrind).

Instructions per analysis: run the server under callgrind for two edit counts and divide the
difference of the totals by the difference of the counts, e.g.
    --edits 1 --no-valgrind --wrap "valgrind --tool=callgrind --callgrind-out-file=cg.1"
    --edits 21 --no-valgrind --wrap "valgrind --tool=callgrind --callgrind-out-file=cg.21"
"""
import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lsp"))
from lsp_client import Client  # noqa: E402


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def session(argv, text, edits, samples, at="h = self.linear(x)"):
    c = Client(argv)
    uri = "file:///bench/dense.py"
    try:
        c.initialize()
        t0 = time.perf_counter()
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                          "text": text}})
        first = c.diagnostics(uri, 1, timeout=60)
        open_ms = (time.perf_counter() - t0) * 1e3
        lines = text.split("\n")
        row = len(lines) // 2
        while at not in lines[row]:
            row += 1
        col = lines[row].index(at) + 1  # `h` -> `hz` -> `h`
        latencies, rss = [], []
        for i in range(edits):
            version = i + 2
            if i % 2 == 0:
                change = {"range": {"start": {"line": row, "character": col}, "end": {"line": row, "character": col}},
                          "text": "z"}
            else:
                change = {"range": {"start": {"line": row, "character": col},
                                    "end": {"line": row, "character": col + 1}}, "text": ""}
            t0 = time.perf_counter()
            c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                "contentChanges": [change]})
            diags = c.diagnostics(uri, version, timeout=60)
            latencies.append((time.perf_counter() - t0) * 1e3)
            if version % 2 == 1 and len(diags) != len(first):
                raise SystemExit("lsp bench: the file's diagnostics changed after edit %d" % i)
            if (i + 1) in samples:
                rss.append((i + 1, rss_kib(c.proc.pid)))
        resp, code = c.shutdown(timeout=600)
        return open_ms, latencies, rss, len(first), code
    finally:
        c.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--edits", type=int, default=10000)
    ap.add_argument("--bytes", type=int, default=100000)
    ap.add_argument("--no-valgrind", action="store_true")
    ap.add_argument("--at", default="h = self.linear(x)",
                    help="the edit goes after the first character of this text, on a line past the middle")
    ap.add_argument("--wrap", default="", help="a command the server runs under (e.g. callgrind)")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    tmp = tempfile.mkdtemp(prefix="p2s-lsp-bench-")
    try:
        path = os.path.join(tmp, "dense.py")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_pylayer.py"), "file", path, str(args.bytes)], check=True)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
        samples = {n for n in (10, 100, 1000, 2000, 5000, 10000, args.edits) if n <= args.edits}
        open_ms, lat, rss, ndiags, code = session(pin + shlex.split(args.wrap) + [binary, "lsp"], text, args.edits,
                                                  samples, args.at)
        lat_sorted = sorted(lat)
        print("lsp: file %d bytes, %d lines, %d diagnostics; %s" % (len(text.encode()), text.count("\n"), ndiags,
                                                                   "one core (taskset -c 0)" if pin else "unpinned"))
        print("lsp: didOpen -> publishDiagnostics: %.2f ms" % open_ms)
        print("lsp: didChange -> publishDiagnostics over %d one-character edits: median %.2f ms, p90 %.2f ms, "
              "max %.2f ms" % (len(lat), statistics.median(lat), lat_sorted[int(len(lat) * 0.9)], lat_sorted[-1]))
        print("lsp: RSS after N edits (KiB): " + ", ".join("%d: %d" % (n, r) for n, r in rss))
        if len(rss) >= 2:
            growth = rss[-1][1] - rss[1][1] if len(rss) > 2 else rss[-1][1] - rss[0][1]
            print("lsp: RSS growth from edit %d to %d: %+d KiB" % (rss[1 if len(rss) > 2 else 0][0], rss[-1][0], growth))
        print("lsp: server exit status after shutdown/exit: %d" % code)
        if not args.no_valgrind and shutil.which("valgrind"):
            log = os.path.join(tmp, "vg.log")
            vg = ["valgrind", "--quiet", "--leak-check=full", "--show-leak-kinds=definite,indirect,possible",
                  "--errors-for-leak-kinds=definite,indirect,possible", "--error-exitcode=99", "--log-file=" + log]
            _, lat_vg, _, _, code = session(vg + [binary, "lsp"], text, 20, set())
            with open(log) as f:
                report = f.read().strip()
            verdict = "clean" if code == 0 and not report else "NOT clean (status %d)\n%s" % (code, report)
            print("lsp: valgrind memcheck, a 20-edit session: %s" % verdict)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
