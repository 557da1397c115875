#!/usr/bin/env python3
"""reliability.py BIN — fault injection and hostile inputs against the command line.

Every check runs the real binary as a child process and looks only at what a user sees: the
exit code, standard output and error, and the files left in the output directory. Each run is
bounded in time and its peak RSS (getrusage of the child, via os.wait4) is held to
32 x the largest input + 32 MiB (docs/RELIABILITY.md).

Sections: alloc (fail the Nth allocation for every N), io (injected write, fsync, rename,
open and read errors; a real full device when a tmpfs can be mounted; the output directory
vanishing mid-run), hostile (odd and huge inputs, FIFOs, odd file names), tree (tree mode).
`python3 reliability.py BIN [SECTION...]`; prints `reliability: N passed, N failed` (known
findings are reported as XFAIL with their FINDINGS.md number and counted in neither).
Standard library only.
"""
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(ROOT, "samples", "cus_tanh_full.py")
OOM_LINE = b"pylayer2static: error: out of memory\n"
MIB = 1 << 20
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


class Result:
    def __init__(self, rc, out, err, seconds, rss, timed_out):
        self.rc, self.out, self.err = rc, out, err
        self.seconds, self.rss, self.timed_out = seconds, rss, timed_out

    def brief(self):
        return "exit %s, %.2fs, %.0f MiB, stderr %r" % (
            "timeout" if self.timed_out else self.rc, self.seconds, self.rss / MIB, self.err[:160])


class Suite:
    def __init__(self, bin_path):
        self.bin = bin_path
        self.passed = self.failed = self.xfailed = 0
        self.figures = []
        self.work = tempfile.mkdtemp(prefix="p2s-rel-")

    def close(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("reliability: FAIL %s%s" % (name, ": " + detail if detail else ""))
        return ok

    def known(self, finding, name, ok, detail=""):
        """An expectation a known finding breaks: XFAIL while broken, a pass once fixed."""
        if ok:
            self.passed += 1
        else:
            self.xfailed += 1
            print("reliability: XFAIL %s (FINDINGS.md %s)%s" % (name, finding, ": " + detail if detail else ""))

    def figure(self, name, res, size):
        self.figures.append((name, size, res.seconds, res.rss))

    def dir(self, name):
        path = os.path.join(self.work, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def run(self, args, env=None, stdin=None, timeout=60, cwd=None, binary=None):
        """Runs BIN args; stdin is bytes, a path, or None (/dev/null)."""
        full_env = dict(os.environ)
        full_env.pop("P2S_FAULT", None)
        full_env.pop("P2S_FAIL_ALLOC", None)
        full_env.update(env or {})
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            if isinstance(stdin, bytes):
                fin = tempfile.TemporaryFile()
                fin.write(stdin)
                fin.seek(0)
            else:
                fin = open(stdin or os.devnull, "rb")
            # Peak RSS comes from /usr/bin/time: a child forked from this (large) Python process
            # would report Python's own pages in its ru_maxrss (Linux keeps the pre-exec peak).
            rss_file = os.path.join(self.work, ".rss")
            argv = [binary or self.bin] + list(args)
            if TIME:
                argv = [TIME, "-q", "-f", "%M", "-o", rss_file] + argv
            started = time.monotonic()
            proc = subprocess.Popen(argv, stdin=fin, stdout=out, stderr=err, env=full_env, cwd=cwd,
                                    start_new_session=True)
            fin.close()
            timed_out = []
            timer = threading.Timer(timeout, lambda: (timed_out.append(1), kill_group(proc)))
            timer.start()
            _, status, usage = os.wait4(proc.pid, 0)
            timer.cancel()
            proc.returncode = os.waitstatus_to_exitcode(status)
            seconds = time.monotonic() - started
            out.seek(0)
            err.seek(0)
            rss = usage.ru_maxrss * 1024
            if TIME:
                try:
                    with open(rss_file) as f:
                        rss = int(f.read().split()[-1]) * 1024
                except (OSError, ValueError, IndexError):
                    pass  # killed by a signal: time wrote no figure
            return Result(proc.returncode, out.read(), err.read(), seconds, rss, bool(timed_out))


def kill_group(proc):
    """Kills a child started with start_new_session and everything it started."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def feed_fifo(path, data, seconds=10):
    """Writes data into a FIFO once a reader opens it; gives up after `seconds` if none does
    (the tool may rightly refuse the FIFO without opening it)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
    os.set_blocking(fd, True)
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def python_parses(data):
    try:
        compile(data, "<output>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def rss_bound(size):
    return 32 * size + 32 * MIB


# --- allocation failures ---------------------------------------------------------------------

def every_allocation(s, name, args, want_after, check_state, stride=1, complete=None):
    """Fails allocation N for every N (every stride-th) below the count a successful run makes;
    every such run must print exactly the one OOM line, exit 4 and write nothing.
    args(d) prepares the empty directory d and returns the arguments; check_state(d) says what
    is wrong with what was left there (None: nothing); complete(d, res), when given, says
    whether a left-over output is the whole, correct output: an allocation that fails after the
    output was committed is finding F5, reported apart from real breakage. Two runs at a time,
    each in its own directory."""
    import concurrent.futures

    def attempt(n, d):
        for entry in os.listdir(d):
            os.unlink(os.path.join(d, entry))
        res = s.run(args(d), env={"P2S_FAIL_ALLOC": str(n)}, timeout=30)
        return res

    # The number of allocations of a successful run: the smallest N whose run succeeds.
    probe = s.dir("alloc-probe")
    lo, hi = 1, 1
    while attempt(hi, probe).rc != want_after:
        lo, hi = hi + 1, hi * 2
        if hi > 1 << 22:
            s.check("alloc: %s: a run succeeds once N is past its allocations" % name, False)
            return
    while lo < hi:
        mid = (lo + hi) // 2
        if attempt(mid, probe).rc == want_after:
            hi = mid
        else:
            lo = mid + 1
    total = lo - 1
    dirs = [s.dir("alloc-w%d" % i) for i in range(2)]
    free = list(dirs)
    lock = threading.Lock()

    def one(n):
        with lock:
            d = free.pop()
        try:
            res = attempt(n, d)
            problem = None
            if res.rc != 4 or res.timed_out:
                problem = res.brief()
            elif res.err != OOM_LINE:
                problem = "stderr %r" % res.err[:200]
            elif res.out:
                problem = "%d bytes on stdout" % len(res.out)
            else:
                problem = check_state(d)
            late = bool(problem and complete and complete(d, res))
            return n, problem, late
        finally:
            with lock:
                free.append(d)

    bad, late = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for n, problem, was_late in pool.map(one, range(1, total + 1, stride)):
            if was_late:
                late.append(n)
            elif problem:
                bad.append("N=%d: %s" % (n, problem))
    runs = len(range(1, total + 1, stride))
    s.check("alloc: %s: every failing allocation (%d runs over N=1..%d) exits 4 with one line and writes nothing"
            % (name, runs, total), not bad and total > 100, "; ".join(bad[:5]))
    if complete:
        s.check("alloc: %s: no allocation fails after the output is committed" % name, not late,
                "N=%s exit 4 after writing the whole output" % ",".join(map(str, late)))


def section_alloc(s):
    transpiled = s.run([SAMPLE]).out

    def only(*names):
        def state(d):
            left = sorted(os.listdir(d))
            return None if left == sorted(names) else "directory holds %s" % left
        return state

    def holds(name, data):
        def complete(d, res):
            path = os.path.join(d, name)
            return not res.out and sorted(os.listdir(d)) == [name] and read(path) == data
        return complete

    every_allocation(s, "transpile to -o", lambda d: [SAMPLE, "-o", os.path.join(d, "out.py")], 0, only(),
                     complete=holds("out.py", transpiled))
    every_allocation(s, "transpile to stdout (every 2nd N)", lambda d: [SAMPLE], 0, only(), stride=2,
                     complete=lambda d, res: res.out == transpiled and not os.listdir(d))
    original = read(SAMPLE)

    def fresh_inplace(d):
        write(os.path.join(d, "model.py"), original)
        return ["--in-place", os.path.join(d, "model.py")]

    def inplace_state(d):
        if read(os.path.join(d, "model.py")) != original:
            return "the input was changed"
        return only("model.py")(d)
    every_allocation(s, "--in-place (every 5th N)", fresh_inplace, 0, inplace_state, stride=5,
                     complete=holds("model.py", transpiled))
    bad = os.path.join(s.work, "bad.py")
    write(bad, b"import paddle\n\ndef f(:\n    return Act.apply(x)\n")
    every_allocation(s, "syntax error, JSON diagnostics", lambda d: ["--output-format=json", bad], 1, only())
    passthrough = os.path.join(ROOT, "tests", "golden", "no_pylayer_passthrough", "input.py")
    if os.path.exists(passthrough):
        every_allocation(s, "file without PyLayer to -o", lambda d: [passthrough, "-o", os.path.join(d, "out.py")],
                         0, only(), complete=holds("out.py", read(passthrough)))


# --- I/O faults --------------------------------------------------------------------------------

OLD = b"old contents\n"
OLD_TIME = 978307200  # 2001-01-01


def prepare_destination(d):
    dest = os.path.join(d, "out.py")
    write(dest, OLD)
    os.chmod(dest, 0o640)
    os.utime(dest, (OLD_TIME, OLD_TIME))
    return dest


def destination_untouched(d, dest):
    st = os.stat(dest)
    problems = []
    if read(dest) != OLD:
        problems.append("contents changed")
    if stat.S_IMODE(st.st_mode) != 0o640:
        problems.append("mode %o" % stat.S_IMODE(st.st_mode))
    if int(st.st_mtime) != OLD_TIME:
        problems.append("mtime changed")
    left = sorted(os.listdir(d))
    if left != ["out.py"]:
        problems.append("directory holds %s" % left)
    return "; ".join(problems)


def section_io(s):
    d = s.dir("io")
    for fault in ["write:ENOSPC", "write:EIO", "write:EPIPE", "fsync:EIO", "fsync:ENOSPC", "rename:EXDEV",
                  "rename:EIO", "rename:ENOSPC", "rename:EROFS", "rename:EACCES", "open:EACCES",
                  "open:ENOSPC", "open:EROFS", "read:EIO"]:
        dest = prepare_destination(d)
        # --no-config: the repository's own pyproject.toml would be the first file read.
        res = s.run(["--no-config", SAMPLE, "-o", dest], env={"P2S_FAULT": fault})
        problem = destination_untouched(d, dest)
        s.check("io: injected %s exits 3" % fault, res.rc == 3, res.brief())
        s.check("io: injected %s leaves the destination untouched and no temp file" % fault,
                not problem, problem)
        lines = res.err.decode("utf-8", "replace").splitlines()
        s.check("io: injected %s says what failed in one line" % fault,
                len(lines) == 1 and lines[0].startswith("pylayer2static: error: ") or
                (len(lines) == 1 and lines[0].startswith(SAMPLE)), repr(res.err[:200]))

    # The second fsync is the directory's, after the rename: the new file is complete and in
    # place, but its durability is not known, so the run reports an I/O error (exit 3).
    dest = prepare_destination(d)
    res = s.run([SAMPLE, "-o", dest], env={"P2S_FAULT": "fsync:EIO:2"})
    whole = s.run([SAMPLE]).out
    s.check("io: a failed directory fsync after the rename exits 3, names the directory, and the "
            "destination holds the complete new file", res.rc == 3 and b"directory" in res.err and
            read(dest) == whole and sorted(os.listdir(d)) == ["out.py"], res.brief())

    for fault in ["write:ENOSPC", "fsync:EIO", "rename:EIO", "open:EACCES"]:
        inplace = os.path.join(d, "model.py")
        for name in os.listdir(d):
            os.unlink(os.path.join(d, name))
        shutil.copyfile(SAMPLE, inplace)
        res = s.run(["--in-place", inplace], env={"P2S_FAULT": fault})
        s.check("io: --in-place with %s exits 3, input untouched, no temp file" % fault,
                res.rc == 3 and read(inplace) == read(SAMPLE) and os.listdir(d) == ["model.py"],
                res.brief() + " left %s" % os.listdir(d))

    # The output directory disappears while the input is still being read (a FIFO holds it).
    base = s.dir("vanish")
    fifo = os.path.join(base, "in.py")
    os.mkfifo(fifo)
    outdir = os.path.join(base, "outdir")
    os.makedirs(outdir)
    started = {}

    def feed():
        deadline = time.monotonic() + 10
        while True:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                if time.monotonic() > deadline:
                    shutil.rmtree(outdir)
                    return
                time.sleep(0.01)
        started["open"] = True
        shutil.rmtree(outdir)
        os.set_blocking(fd, True)
        os.write(fd, read(SAMPLE))
        os.close(fd)
    t = threading.Thread(target=feed)
    t.start()
    res = s.run([fifo, "-o", os.path.join(outdir, "out.py")], timeout=30)
    t.join()
    s.check("io: output directory removed mid-run exits 3 and creates nothing",
            res.rc == 3 and not os.path.exists(outdir) and sorted(os.listdir(base)) == ["in.py"],
            res.brief())

    # A real full device: a 64 KiB tmpfs, when this machine lets us mount one.
    mnt = s.dir("tmpfs")
    mounted = subprocess.call(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0
    if mounted:
        try:
            dest = prepare_destination(mnt)
            write(os.path.join(mnt, "filler"), b"x" * (60 * 1024))
            big = os.path.join(s.work, "big_in.py")
            write(big, read(SAMPLE) + b"# padding\n" * 4000)
            res = s.run([big, "-o", dest])
            os.unlink(os.path.join(mnt, "filler"))
            s.check("io: real ENOSPC on a full tmpfs exits 3, destination untouched, no temp file",
                    res.rc == 3 and not destination_untouched(mnt, dest), res.brief())
        finally:
            subprocess.call(["umount", mnt])
    else:
        print("reliability: note: cannot mount a tmpfs here; the real-ENOSPC check is skipped")


# --- hostile inputs ----------------------------------------------------------------------------

def bounded(s, name, res, size, seconds, rss_finding=None):
    """Time and memory bounds; rss_finding names the finding that breaks the memory bound."""
    s.figure(name, res, size)
    s.check("hostile: %s finishes in %ss" % (name, seconds), not res.timed_out and res.seconds <= seconds,
            res.brief())
    what = "hostile: %s peak RSS <= 32 x %.1f MiB + 32 MiB" % (name, size / MIB)
    if rss_finding:
        s.known(rss_finding, what, res.rss <= rss_bound(size), res.brief())
    else:
        s.check(what, res.rss <= rss_bound(size), res.brief())


def transpiles_cleanly(s, name, path, expect_crlf=False, bom=False):
    """rc 0, CPython parses the output, a second run changes nothing."""
    res = s.run([path])
    ok = res.rc == 0 and b"_p2s.apply(" in res.out
    s.check("hostile: %s transpiles" % name, ok, res.brief())
    if not ok:
        return res
    s.check("hostile: %s output parses with CPython" % name, python_parses(res.out))
    again = s.run(["-"], stdin=res.out)
    s.check("hostile: %s second run changes nothing" % name, again.rc == 0 and again.out == res.out,
            again.brief())
    if expect_crlf:
        s.check("hostile: %s output keeps CRLF everywhere" % name,
                res.out.count(b"\n") == res.out.count(b"\r\n"))
    if bom:
        s.check("hostile: %s output keeps the BOM first" % name, res.out.startswith(b"\xef\xbb\xbf"))
    return res


def gen_stdlib_like(size):
    import sysconfig
    chunk = read(os.path.join(sysconfig.get_paths()["stdlib"], "argparse.py"))
    return chunk * (size // len(chunk) + 1)


def section_hostile(s):
    d = s.dir("hostile")
    sample = read(SAMPLE)

    def case(name, data):
        path = os.path.join(d, name)
        write(path, data)
        return path

    # Empty input, file and stdin.
    p = case("empty.py", b"")
    res = s.run([p])
    s.check("hostile: empty file exits 0 with empty output", res.rc == 0 and res.out == b"" and res.err == b"",
            res.brief())
    res = s.run(["-"], stdin=b"")
    s.check("hostile: empty stdin exits 0 with empty output", res.rc == 0 and res.out == b"", res.brief())

    # 50 MB of ordinary code (argparse.py repeated), once without and once with a PyLayer.
    big = gen_stdlib_like(50 * MIB)
    p = case("big.py", big)
    res = s.run([p, "-o", os.path.join(d, "big_out.py")], timeout=180)
    s.check("hostile: 50 MB file without PyLayer comes back byte-identical",
            res.rc == 0 and read(os.path.join(d, "big_out.py")) == big, res.brief())
    bounded(s, "50 MB file without PyLayer", res, len(big), 120)
    os.unlink(os.path.join(d, "big_out.py"))
    p = case("big_pylayer.py", sample + big)
    res = s.run([p, "-o", os.path.join(d, "big_out.py")], timeout=180)
    out = read(os.path.join(d, "big_out.py")) if res.rc == 0 else b""
    s.check("hostile: 50 MB file with a PyLayer transpiles",
            res.rc == 0 and b"_p2s.apply(cus_tanh" in out and out.count(b"\n") > big.count(b"\n"), res.brief())
    bounded(s, "50 MB file with a PyLayer", res, len(sample) + len(big), 180, rss_finding=None)
    for name in ("big.py", "big_pylayer.py", "big_out.py"):
        if os.path.exists(os.path.join(d, name)):
            os.unlink(os.path.join(d, name))
    del big, out

    # Dense code: 2 MiB of distinct module-level assignments (finding F3: superlinear time).
    line = 'x_%d = compute(a, b, "some text here", [1, 2, 3])\n'
    dense = "".join(line % i for i in range(2 * MIB // 48)).encode()
    p = case("dense.py", dense)
    res = s.run([p], timeout=120)
    s.check("hostile: 2 MiB of distinct assignments comes back byte-identical",
            res.rc == 0 and res.out == dense, res.brief())
    s.figure("2 MiB of distinct module-level assignments", res, len(dense))
    s.check("hostile: 2 MiB of distinct assignments finishes in 10s", res.seconds <= 10, res.brief())
    s.known("F4", "hostile: 2 MiB of distinct assignments peak RSS <= 32 x input + 32 MiB",
            res.rss <= rss_bound(len(dense)), res.brief())
    os.unlink(p)

    # 10k-deep nesting.
    deep = 10000
    p = case("deep_paren.py", b"x = " + b"(" * deep + b"1" + b")" * deep + b"\n")
    res = s.run([p])
    s.check("hostile: 10k nested parentheses pass through", res.rc == 0 and res.out == read(p), res.brief())
    bounded(s, "10k nested parentheses", res, os.path.getsize(p), 10)
    p = case("deep_list.py", b"x = " + b"[" * deep + b"]" * deep + b"\n")
    res = s.run([p])
    s.check("hostile: 10k nested lists pass through", res.rc == 0 and res.out == read(p), res.brief())
    bounded(s, "10k nested lists", res, os.path.getsize(p), 10)
    p = case("deep_apply.py", sample + b"y = cus_tanh.apply(" + b"(" * deep + b"x" + b")" * deep + b", func1=f)\n")
    res = s.run([p])
    s.check("hostile: an apply call around 10k nested parentheses transpiles",
            res.rc == 0 and b"_p2s.apply(cus_tanh, " + b"(" * deep in res.out, res.brief())
    bounded(s, "apply around 10k nested parentheses", res, os.path.getsize(p), 10)
    p = case("deep_calls.py", sample + b"y = " + b"f(" * deep + b"cus_tanh.apply(x, func1=f)" + b")" * deep + b"\n")
    res = s.run([p])
    s.check("hostile: an apply call inside 10k nested calls transpiles",
            res.rc == 0 and b"_p2s.apply(cus_tanh, x, func1=f)" in res.out, res.brief())
    bounded(s, "apply inside 10k nested calls", res, os.path.getsize(p), 10)
    blocks = b"".join(b" " * i + b"if x:\n" for i in range(deep)) + b" " * deep + b"pass\n"
    p = case("deep_blocks.py", blocks)
    res = s.run([p])
    s.check("hostile: 10k nested blocks are an input error (exit 1), not a crash", res.rc == 1, res.brief())
    bounded(s, "10k nested blocks", res, len(blocks), 20)
    s.check("hostile: 10k nested blocks say the nesting is too deep",
            b"indent" in res.err.lower() or b"nest" in res.err.lower(), res.err[:120].decode("utf-8", "replace"))
    # Valid Python (CPython allows 100 levels) that the grammar's scanner cannot track: 64 blocks
    # of 4 spaces reach column 256, which its one-byte indent serialization cannot store.
    blocks = b"".join(b"    " * i + b"if x:\n" for i in range(64)) + b"    " * 64 + b"pass\n"
    p = case("indent_256.py", blocks)
    res = s.run([p])
    s.check("hostile: CPython accepts 64 blocks of 4-space indentation", python_parses(blocks))
    s.check("hostile: 64 blocks of 4-space indentation (column 256): exit 1 with a plain message at the deep line",
            res.rc == 1 and b":65:" in res.err and b"column 256" in res.err, res.brief())

    # 1M-character lines.
    mline = 1000000
    p = case("long_string.py", b'x = "' + b"a" * mline + b'"\n')
    res = s.run([p])
    s.check("hostile: a 1M-character string line passes through", res.rc == 0 and res.out == read(p), res.brief())
    bounded(s, "1M-character string line", res, os.path.getsize(p), 10)
    p = case("long_list.py", b"x = [" + b"1," * (mline // 2) + b"]\n")
    res = s.run([p])
    s.check("hostile: a 1M-character list line passes through", res.rc == 0 and res.out == read(p), res.brief())
    bounded(s, "1M-character list line", res, os.path.getsize(p), 20, rss_finding="F4")
    p = case("long_apply.py", sample + b"y = cus_tanh.apply([" + b"1," * (mline // 2) + b"], func1=f)\n")
    res = transpiles_cleanly(s, "a 1M-character line with an apply call", p)
    bounded(s, "1M-character line with an apply call", res, os.path.getsize(p), 20, rss_finding="F4")
    p = case("long_error.py", b"x = [" + b"1," * (mline // 2) + b")\n")
    res = s.run([p])
    s.check("hostile: a syntax error on a 1M-character line exits 1 with a position",
            res.rc == 1 and res.err.startswith(p.encode() + b":1:"), res.brief())
    bounded(s, "syntax error on a 1M-character line", res, os.path.getsize(p), 20, rss_finding="F4")

    # Line endings, BOM, tabs.
    transpiles_cleanly(s, "CRLF", case("crlf.py", sample.replace(b"\n", b"\r\n")), expect_crlf=True)
    transpiles_cleanly(s, "BOM", case("bom.py", b"\xef\xbb\xbf" + sample), bom=True)
    transpiles_cleanly(s, "BOM + CRLF", case("bom_crlf.py", b"\xef\xbb\xbf" + sample.replace(b"\n", b"\r\n")),
                       expect_crlf=True, bom=True)
    mixed_crlf = sample.replace(b"\n", b"\r\n", 10)
    transpiles_cleanly(s, "mixed LF and CRLF", case("mixed_eol.py", mixed_crlf))
    cr = sample.replace(b"\n", b"\r")
    p = case("lone_cr.py", cr)
    res = s.run([p])
    s.check("hostile: CPython accepts lone-CR line endings", python_parses(cr))
    s.check("hostile: lone-CR line endings are an input error (exit 1), not a crash", res.rc in (0, 1), res.brief())
    s.check("hostile: lone-CR line endings are named in the message",
            res.rc == 0 or b"CR" in res.err or b"line ending" in res.err,
            res.err[:120].decode("utf-8", "replace"))
    tabs = sample.replace(b"\n        ", b"\n\t\t").replace(b"\n    ", b"\n\t")
    transpiles_cleanly(s, "tab indentation", case("tabs.py", tabs))
    mixed = sample.replace(b"\n        return", b"\n    \treturn")
    p = case("tabs_mixed.py", mixed)
    res = s.run([p])
    s.check("hostile: tab+space indentation (consistent) does not crash", res.rc in (0, 1), res.brief())
    if python_parses(mixed):
        s.check("hostile: tab+space indentation CPython accepts transpiles", res.rc == 0 and python_parses(res.out),
                res.brief())
    tab_error = b"if x:\n        a = 1\n\tb = 2\n"
    p = case("tab_error.py", tab_error)
    res = s.run([p])
    s.check("hostile: inconsistent tabs (CPython's TabError) pass through unchanged or are an input error",
            (res.rc == 0 and res.out == tab_error) or res.rc == 1, res.brief())

    # Not text.
    for name, data, code in [
            ("nul.py", b"x = 1\n\x00y = 2\n", b"P2S002"),
            ("nul_pylayer.py", sample + b"\x00", b"P2S002"),
            ("latin1.py", b'x = "caf\xe9"\n', b"P2S003"),
            ("lone_continuation.py", b"x = 1\n\x80\n", b"P2S003"),
            ("overlong.py", b'x = "\xc0\xaf"\n', b"P2S003"),
            ("surrogate.py", b'x = "\xed\xa0\x80"\n', b"P2S003"),
            ("above_max.py", b'x = "\xf4\x90\x80\x80"\n', b"P2S003"),
            ("truncated_at_eof.py", b'x = 1 # \xe2\x82', b"P2S003"),
            ("utf16.py", "x = 1\n".encode("utf-16"), b"P2S00")]:
        p = case(name, data)
        res = s.run([p, "-o", os.path.join(d, "never.py")])
        s.check("hostile: %s exits 1 with %s and writes nothing" % (name, code.decode()),
                res.rc == 1 and code in res.err and not os.path.exists(os.path.join(d, "never.py")), res.brief())

    # Endless and special inputs.
    res = s.run(["/dev/zero"], timeout=60)
    s.figure("/dev/zero", res, 256 * MIB)
    s.check("hostile: /dev/zero is refused (exit 3) in bounded time and memory",
            res.rc == 3 and res.seconds < 30 and res.rss <= 2 * 256 * MIB + 32 * MIB, res.brief())
    res = s.run(["-"], stdin="/dev/zero", timeout=60)
    s.check("hostile: /dev/zero on stdin is refused (exit 3)", res.rc == 3, res.brief())
    res = s.run(["/dev/null"])
    s.check("hostile: /dev/null is an empty input", res.rc == 0 and res.out == b"", res.brief())
    fifo = os.path.join(d, "fifo.py")
    os.mkfifo(fifo)
    t = threading.Thread(target=feed_fifo, args=(fifo, sample))
    t.start()
    res = s.run([fifo])
    t.join()
    direct = s.run([SAMPLE])
    s.check("hostile: a FIFO input transpiles like the file", res.rc == 0 and res.out == direct.out, res.brief())
    t = threading.Thread(target=feed_fifo, args=(fifo, b"x = 1\n", 5))
    t.start()
    res = s.run([fifo, "--in-place"], timeout=5)
    t.join()
    s.check("hostile: --in-place on a FIFO finishes (exit 0, or a usage error naming it) and leaves the FIFO",
            not res.timed_out and stat.S_ISFIFO(os.stat(fifo).st_mode) and
            (res.rc == 0 or (res.rc == 2 and b"fifo.py" in res.err)), res.brief())
    os.unlink(fifo)

    # Destinations that are not regular files. A private device node stands in for /dev/null:
    # the real one must never be the subject of a test that might replace it (finding F8).
    node = os.path.join(d, "null")
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError:
        node = None
    if node:
        res = s.run([SAMPLE, "-o", node], timeout=10)
        s.check("hostile: -o onto a character device writes to it and leaves the device node",
                stat.S_ISCHR(os.lstat(node).st_mode), res.brief())
        os.unlink(node)
    # `-o /dev/stdout`, through a private link to /proc/self/fd/1 (a rename must never reach
    # the real /dev/stdout link): into a pipe it must not block reading its own output.
    link = os.path.join(d, "stdout")
    os.symlink("/proc/self/fd/1", link)
    proc = subprocess.Popen(["sh", "-c", '"$0" "$1" -o "$2" | cat > /dev/null', s.bin, SAMPLE, link],
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        rc = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.wait()
        rc = "timeout"
    s.check("hostile: -o /dev/stdout into a pipe finishes", rc == 0, "exit %s" % rc)
    if os.path.lexists(link):
        os.unlink(link)

    # File names with spaces and non-ASCII characters.
    nd = os.path.join(d, "my models ü")
    os.makedirs(nd)
    src_name = os.path.join(nd, "mödel ñ 名前.py")
    shutil.copyfile(SAMPLE, src_name)
    out_name = os.path.join(nd, "out put é.py")
    res = s.run([src_name, "-o", out_name])
    s.check("hostile: names with spaces and non-ASCII: -o writes the file, no temp file",
            res.rc == 0 and read(out_name) == direct.out and sorted(os.listdir(nd)) == sorted(
                [os.path.basename(src_name), os.path.basename(out_name)]), res.brief())
    bad_name = os.path.join(nd, "bäd file.py")
    write(bad_name, b"def f(:\n    pass\n")
    res = s.run([bad_name])
    s.check("hostile: a non-ASCII name is printed as given in text diagnostics",
            res.rc == 1 and res.err.startswith(bad_name.encode() + b":1:"), res.brief())
    res = s.run(["--output-format=json", bad_name])
    try:
        got = json.loads(res.err.decode("utf-8"))[0]["file"]
    except (ValueError, LookupError, TypeError):
        got = None
    s.check("hostile: a non-ASCII name round-trips through JSON diagnostics", got == bad_name, repr(res.err[:200]))


# --- tree mode ---------------------------------------------------------------------------------

def section_tree(s):
    help_text = s.run(["--help"]).out
    if b"OUT_DIR" not in help_text and b"tree" not in help_text:
        print("reliability: note: no tree mode in this binary; tree checks skipped")
        return
    base = s.dir("tree")
    src = os.path.join(base, "src")
    os.makedirs(os.path.join(src, "pkg", "sub"))
    for i in range(12):
        shutil.copyfile(SAMPLE, os.path.join(src, "pkg", "m%02d.py" % i))
        write(os.path.join(src, "pkg", "sub", "plain%02d.py" % i), b"x = %d\n" % i)
    write(os.path.join(src, "pkg", "__init__.py"), b"")
    os.symlink("..", os.path.join(src, "pkg", "sub", "loop"))
    os.symlink("nowhere.py", os.path.join(src, "pkg", "dangling.py"))
    outs = {}
    for jobs in ("1", "2", "4"):
        out = os.path.join(base, "out-j" + jobs)
        res = s.run([src, "-o", out, "-j" + jobs], timeout=60)
        outs[jobs] = (res, out)
        s.check("tree: -j%s with a symlink loop and a dangling link finishes" % jobs,
                not res.timed_out and res.rc in (0, 1, 3), res.brief())

    def snapshot(root):
        files = {}
        for dirpath, dirnames, filenames in os.walk(root):
            for f in filenames:
                full = os.path.join(dirpath, f)
                files[os.path.relpath(full, root)] = read(full)
        return files
    one = snapshot(outs["1"][1])
    for jobs in ("2", "4"):
        res, out = outs[jobs]
        s.check("tree: -j%s gives byte-identical outputs and the same exit code as -j1" % jobs,
                snapshot(out) == one and res.rc == outs["1"][0].rc and res.err == outs["1"][0].err,
                "%d vs %d files" % (len(snapshot(out)), len(one)))
    s.check("tree: no temp files left", not any(".p2s-" in name for name in one), str(sorted(one)[:5]))

    # SIGINT / SIGTERM while a tree is being written: only complete files, no temp files, 130.
    # The signal goes as soon as the first output appears; a run that finished before it
    # arrived proves nothing, so the tree doubles and the run is tried again.
    big = os.path.join(base, "bigsrc")
    os.makedirs(big)
    filler = read(SAMPLE) + gen_stdlib_like(MIB)
    expected = None
    count = 0
    for sig in (signal.SIGINT, signal.SIGTERM):
        for attempt in range(3):
            want = 32 << attempt
            while count < want:
                write(os.path.join(big, "m%03d.py" % count), filler)
                count += 1
            if expected is None:
                expected = s.run([os.path.join(big, "m000.py")], timeout=60).out
            out = os.path.join(base, "out-sig")
            shutil.rmtree(out, ignore_errors=True)
            proc = subprocess.Popen([s.bin, big, "-o", out, "-j2"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, start_new_session=True)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None and not (
                    os.path.isdir(out) and any(files for _, _, files in os.walk(out))):
                time.sleep(0.002)
            proc.send_signal(sig)
            try:
                _, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                _, err = proc.communicate()
            if proc.returncode != 0:
                break
        files = snapshot(out) if os.path.isdir(out) else {}
        temps = [f for f in files if ".p2s-" in f]
        partial = [f for f, data in files.items() if ".p2s-" not in f and data != expected]
        s.check("tree: %s mid-run (%d files) exits 130" % (signal.Signals(sig).name, count), proc.returncode == 130,
                "exit %s, %d files written, stderr %r" % (proc.returncode, len(files), err[:200]))
        s.check("tree: %s mid-run leaves only complete files and no temp file (%d written)"
                % (signal.Signals(sig).name, len(files) - len(temps)), not temps and not partial,
                "temps %s partial %s" % (temps[:3], partial[:3]))


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    s = Suite(os.path.abspath(sys.argv[1]))
    sections = sys.argv[2:] or ["alloc", "io", "hostile", "tree"]
    started = time.monotonic()
    try:
        for name in sections:
            t0 = time.monotonic()
            globals()["section_" + name](s)
            print("reliability: section %s took %.1fs" % (name, time.monotonic() - t0))
    finally:
        s.close()
    for name, size, seconds, rss in s.figures:
        print("reliability: figure %s: input %.2f MiB, %.2f s, peak RSS %.1f MiB (%.1fx input)"
              % (name, size / MIB, seconds, rss / MIB, rss / max(size, 1)))
    print("reliability: took %.1fs, %d known findings (XFAIL)" % (time.monotonic() - started, s.xfailed))
    print("reliability: %d passed, %d failed" % (s.passed, s.failed))
    return 0 if s.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
