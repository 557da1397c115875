"""conformance.py BIN — PaddlePaddle's own PyLayer tests, untranspiled vs transpiled.

For each pinned framework version (venv, test tree of paddle-tests/ beside this file):
  1. copy the test tree twice into a temp dir (the vendored tree is never touched) and, where
     the tree's README says so (paddle-3 on paddlepaddle >= 3.1), append the
     `to_legacy_ir_test` shim to both copies of dygraph_to_static_utils.py;
  2. transpile each test file of the second copy in place (`BIN f.py -o f.py.tmp`, then
     rename); the helpers stay untouched. Output written is success whatever the exit status
     (exit 1 = error-level findings with output); exit >= 2, no output, or an output equal to
     the input is a failure of every test of that file;
  3. run every test file of both copies with `python -m unittest` (runner.py: the same
     thing, plus a per-test record and seeded generators), from its folder, under the venv;
  4. every test that passes untranspiled must pass transpiled, except the entries of
     expected_differences.txt (`VERSION TEST_ID REASON`, VERSION exact or a range such as
     `3.x`), each of which must still differ on every version it matches that ran.

Prints per-file and per-version lines, every failure with the essence of its traceback, and
last `conformance: N passed, N failed` (a test that conforms, or differs as listed, passes).
Never skips: a missing venv or framework, an untranspiled run that passes nothing, a stale
or malformed expected difference each count as failed. Standard library only.

Environment: P2S_PADDLE_TESTS (default tests/conformance/paddle-tests), P2S_CONFORMANCE_JOBS
(parallel test processes, default min(4, CPUs)), P2S_CONFORMANCE_TIMEOUT (seconds per test
process, default 600), P2S_CONFORMANCE_KEEP=1 (keep the temp dir and say where it is).
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUNNER = os.path.join(HERE, "runner.py")

# (venv, folder of paddle-tests/): the framework each test tree matches (its README).
VERSIONS = [(".venv", "paddle-3"), (".venv-2.6", "paddle-2.6")]
TREES = ("paddle-3", "paddle-2.6")
# The test files, relative to TREE/test; everything else in the tree is a helper.
TEST_FILES = ["dygraph_to_static/test_pylayer.py", "legacy_test/test_pylayer_op.py"]
SHIM_FILE = "dygraph_to_static/dygraph_to_static_utils.py"
SHIM = "\ndef to_legacy_ir_test(fn): return to_pir_test(fn)\n"
PASSING = ("pass", "expected_failure")   # what unittest counts as successful
# An expected difference's VERSION: one release (3.3.1), or every release of a major or minor
# line (3.x, 3.1.x).
VERSION_PATTERN = re.compile(r"\d+\.\d+\.\d+|\d+(\.\d+)?\.x")

passed = 0
failed = 0
WORK = ""   # the temp dir, shortened out of the tracebacks printed


def say(msg=""):
    print(msg, flush=True)


def fail(msg, count=1):
    global failed
    failed += count
    say("conformance: FAIL " + msg)


def indent(text, lines=12):
    body = [ln for ln in text.rstrip().splitlines() if ln.strip()]
    if len(body) > lines:
        body = ["..."] + body[-lines:]
    return "\n".join("    | " + ln for ln in body)


EXC_LINE = re.compile(r"\s*(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt)\b")


def essence(detail, lines=16):
    """A traceback's frames outside site-packages (with their code line), the dy2static
    `<--- HERE` marks and the exception lines; other text: its last lines."""
    if "Traceback (most recent call last)" not in detail:
        return indent(detail, lines)
    src = detail.rstrip().splitlines()
    keep = []
    for i, ln in enumerate(src):
        frame = ln.strip().startswith('File "')
        if frame and "/site-packages/" not in ln:
            keep += [i, i + 1]
        elif "<--- HERE" in ln:
            keep += [i - 1, i]
        elif EXC_LINE.match(ln) or (frame and i == len(src) - 2):
            keep.append(i)
    picked = [src[i] for i in sorted(set(keep)) if 0 <= i < len(src) and src[i].strip()]
    if len(picked) > lines:
        picked = picked[:2] + ["..."] + picked[-(lines - 2):]
    return indent("\n".join(picked) or detail, lines + 1)


def version_tuple(v):
    nums = re.findall(r"\d+", v)[:3]
    return tuple(int(n) for n in nums) + (0,) * (3 - len(nums))


def needs_shim(tree, version):
    # paddle-3's legacy-IR variants cannot run on 3.1+ (no legacy IR in to_static); the tree's
    # README says to run them under PIR there. 0.0.0 is a develop build, i.e. the newest.
    vt = version_tuple(version)
    return tree == "paddle-3" and (vt >= (3, 1, 0) or vt == (0, 0, 0))


def copy_tree(src, dst):
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for dirpath, dirnames, filenames in os.walk(dst):   # the source may be read-only
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR | stat.S_IRUSR
                     | (stat.S_IXUSR if name in dirnames else 0))
    os.chmod(dst, os.stat(dst).st_mode | stat.S_IWUSR)


def transpile(binary, path):
    """Returns (ok, message)."""
    folder, name = os.path.split(path)
    tmp = name + ".tmp"
    try:
        proc = subprocess.run([binary, name, "-o", tmp], cwd=folder, capture_output=True,
                              text=True, errors="replace", timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, "could not run %s: %s" % (binary, e)
    diags = re.findall(r"^\S+:\d+:\d+: (?:error|warning|note)\[\w+\].*$", proc.stderr, re.M)
    errors = [d for d in diags if ": error[" in d]
    summary = "exit %d, %d diagnostic%s, %d error%s" % (
        proc.returncode, len(diags), "" if len(diags) == 1 else "s",
        len(errors), "" if len(errors) == 1 else "s")
    tmp_path = os.path.join(folder, tmp)
    if proc.returncode >= 2 or proc.returncode < 0 or not os.path.exists(tmp_path):
        detail = "\n".join(errors[:10]) or proc.stderr.strip() or "(nothing on stderr)"
        return False, "transpiling %s wrote no output (%s)\n%s" % (name, summary, indent(detail))
    with open(path, "rb") as a, open(tmp_path, "rb") as b:
        same = a.read() == b.read()
    if same:
        return False, "transpiling %s left it unchanged (%s): nothing would be tested" % (
            name, summary)
    os.replace(tmp_path, path)
    note = ""
    if errors:
        note = "\n    error-level findings (exit 1; their classes keep the eager path):\n" + \
            indent("\n".join(errors), 10)
    return True, "transpiled (%s)%s" % (summary, note)


class Run:
    """One `python -m unittest MODULE` process and what it recorded."""

    def __init__(self, python, path, label):
        self.python, self.path, self.label = python, path, label
        self.results = {}        # test id -> (outcome, detail), in the order they finished
        self.seconds = 0.0
        self.problem = ""        # crash, timeout, load error: why tests may be missing
        self.status = None       # the exit status (negative: the signal), None after a timeout

    def __call__(self, timeout):
        folder, name = os.path.split(self.path)
        module = name[:-3]
        out = os.path.join(folder, ".p2s-conformance-%s.jsonl" % module)
        log = os.path.join(folder, ".p2s-conformance-%s.log" % module)
        env = dict(os.environ, P2S_CONFORMANCE_OUT=out, PYTHONDONTWRITEBYTECODE="1")
        t0 = time.time()
        rc = None
        with open(log, "w") as logf:
            try:
                proc = subprocess.Popen([self.python, RUNNER, module], cwd=folder, env=env,
                                        stdout=logf, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as e:
                self.problem = "could not start %s: %s" % (self.python, e)
                return self
            try:
                rc = self.status = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                self.problem = "timed out after %ds" % timeout
        self.seconds = time.time() - t0
        running = None
        if os.path.exists(out):
            with open(out, encoding="utf-8", errors="replace") as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue   # a line cut short by a crash
                    if rec["event"] == "start":
                        running = rec["id"]
                    else:
                        self.results[rec["id"]] = (rec["outcome"], rec["detail"])
                        if rec["id"] == running:
                            running = None
        with open(log, encoding="utf-8", errors="replace") as f:
            tail = f.read()[-3000:]
        if running is not None:
            why = self.problem or "the process died (exit %s)" % rc
            self.results[running] = ("crash", "%s while this test ran; output tail:\n%s" % (
                why, tail))
            self.problem = "%s during %s" % (why, running)
        elif rc not in (0, 1) and not self.problem:
            self.problem = "exit %s; output tail:\n%s" % (rc, tail)
        elif not self.results and not self.problem:
            self.problem = "recorded no test; output tail:\n%s" % tail
        # Module import errors and setUpClass errors are results whose ids are no test's.
        load = [d for tid, (o, d) in self.results.items()
                if o == "error" and (tid.startswith("unittest.loader._FailedTest")
                                     or tid.startswith(("setUpClass", "setUpModule",
                                                        "tearDownClass", "tearDownModule")))]
        if load:
            self.problem = (self.problem + "\n" if self.problem else "") + load[0]
        return self


def version_matches(pattern, version):
    """Whether an expected difference's VERSION (`3.3.1`, `3.1.x`, `3.x`) covers `version`."""
    if pattern.endswith(".x"):
        return version.startswith(pattern[:-1])
    return version == pattern


def read_expected(path):
    """{(version pattern, test_id): reason}; a malformed line counts as failed."""
    entries = {}
    if not os.path.exists(path):
        fail("%s is missing (it may be empty, but it must exist)" % path)
        return entries
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split(None, 2)
            if len(parts) < 3:
                fail("%s:%d: want `VERSION TEST_ID REASON`, got %r" % (path, n, text))
                continue
            if not VERSION_PATTERN.fullmatch(parts[0]):
                fail("%s:%d: VERSION %r is not X.Y.Z, X.Y.x or X.x" % (path, n, parts[0]))
                continue
            key = (parts[0], parts[1])
            if key in entries:
                fail("%s:%d: %s %s listed twice" % (path, n, parts[0], parts[1]))
            entries[key] = parts[2]
    return entries


def setup_version(venv, tree, src_root, work, binary):
    """Probes the venv, copies and transpiles. Returns a dict, or None (failure counted).
    tree None: paddle-2.6 for a 2.x framework, else paddle-3."""
    python = os.path.join(ROOT, venv, "bin", "python")
    if not os.path.exists(python):
        fail("%s is missing (run 'make venv'); refusing to skip %s" % (
            venv, tree or "its framework version"))
        return None
    probe = subprocess.run([python, "-c", "import paddle; print(paddle.__version__)"],
                           capture_output=True, text=True, errors="replace", timeout=300)
    lines = probe.stdout.strip().splitlines()
    if probe.returncode != 0 or not lines:
        fail("%s has no working PaddlePaddle (run 'make venv'); refusing to skip\n%s" % (
            venv, indent(probe.stderr, 5)))
        return None
    version = lines[-1].strip()
    if tree is None:
        tree = "paddle-2.6" if version_tuple(version)[0] == 2 else "paddle-3"
    src = os.path.join(src_root, tree, "test")
    missing = [f for f in TEST_FILES if not os.path.isfile(os.path.join(src, f))]
    if missing:
        fail("%s: test files missing from %s: %s" % (version, src, ", ".join(missing)))
        return None
    slot = os.path.join(work, "%s-%s" % (tree, version))
    if os.path.exists(slot):
        fail("paddlepaddle %s (%s) is given twice" % (version, venv))
        return None
    base = os.path.join(slot, "untranspiled", "test")
    p2s = os.path.join(slot, "transpiled", "test")
    copy_tree(src, base)
    copy_tree(src, p2s)
    shim = needs_shim(tree, version)
    if shim:
        for copy in (base, p2s):
            with open(os.path.join(copy, SHIM_FILE), "a", encoding="utf-8") as f:
                f.write(SHIM)
    say("conformance: paddlepaddle %s (%s, %s/test%s)" % (
        version, venv, tree, ", to_legacy_ir_test shim: legacy-IR variants run under PIR"
        if shim else ""))
    files = []
    for rel in TEST_FILES:
        ok, msg = transpile(binary, os.path.join(p2s, rel))
        files.append({"rel": rel, "transpiled": ok, "transpile_msg": msg,
                      "base": Run(python, os.path.join(base, rel), "untranspiled"),
                      "p2s": Run(python, os.path.join(p2s, rel), "transpiled") if ok else None})
    return {"venv": venv, "tree": tree, "version": version, "files": files}


def compare(ver, expected, used):
    """Counts and prints one version's outcomes; adds (entry, version) to `used` for each
    expected difference that names a test passing untranspiled there."""
    global passed, failed
    version = ver["version"]
    v_pass = v_fail = v_expected = v_notcompared = 0
    for f in ver["files"]:
        base, p2s = f["base"], f["p2s"]
        n_base = sum(1 for o, _ in base.results.values() if o in PASSING)
        n_p2s = sum(1 for o, _ in p2s.results.values() if o in PASSING) if p2s else 0
        total = len(base.results)
        say("conformance: %s %s: %s; untranspiled %d/%d pass (%.1fs), transpiled %s" % (
            version, f["rel"], f["transpile_msg"].split("\n")[0] if f["transpiled"]
            else "NOT TRANSPILED",
            n_base, total, base.seconds,
            "%d/%d pass (%.1fs)" % (n_p2s, len(p2s.results), p2s.seconds) if p2s else "not run"))
        if f["transpiled"] and "\n" in f["transpile_msg"]:
            say(f["transpile_msg"].split("\n", 1)[1])
        if n_base == 0:
            fail("%s %s: the untranspiled file passes no test: broken environment?\n%s" % (
                version, f["rel"], indent(base.problem or "(no detail)")))
            v_fail += 1
        elif base.problem:
            say("conformance: note: %s %s untranspiled: %s" % (
                version, f["rel"], base.problem.splitlines()[0]))
        if not f["transpiled"]:
            say("conformance: FAIL %s %s: %s\n    (each of its %d tests that pass untranspiled "
                "counts as failed)" % (version, f["rel"], f["transpile_msg"], n_base))
        for tid, (outcome, detail) in base.results.items():
            if tid.startswith("unittest.loader._FailedTest"):
                continue
            if outcome not in PASSING:
                v_notcompared += 1
                say("conformance: note: %s %s is %s untranspiled: not compared" % (
                    version, tid, outcome))
                continue
            keys = [k for k in expected if k[1] == tid and version_matches(k[0], version)]
            used.update((k, version) for k in keys)
            if len(keys) > 1:
                fail("%s %s is matched by several entries of expected_differences.txt (%s): "
                     "keep one" % (version, tid, ", ".join(k[0] for k in keys)))
                v_fail += 1
                continue
            key = keys[0] if keys else None
            if not f["transpiled"]:   # the file's FAIL line above says why
                failed += 1
                v_fail += 1
                continue
            if tid in p2s.results:
                got, why = p2s.results[tid]
            else:
                got, why = "not run", p2s.problem or "not found in the transpiled run"
            ok = got in PASSING
            if key is not None:
                if ok:
                    fail("%s %s passes transpiled now: remove it from expected_differences.txt, "
                         "or narrow its VERSION %s (%s)" % (version, tid, key[0], expected[key]))
                    v_fail += 1
                else:
                    passed += 1
                    v_expected += 1
                    say("conformance: expected difference: %s %s is %s transpiled (%s: %s)" % (
                        version, tid, got, key[0], expected[key]))
            elif ok:
                passed += 1
                v_pass += 1
            else:
                fail("%s %s: passes untranspiled, %s transpiled\n%s" % (
                    version, tid, got, essence(why.replace(WORK + os.sep, ""))))
                v_fail += 1
    say("conformance: paddlepaddle %s: %d conform, %d fail transpiled, %d expected "
        "differences, %d fail untranspiled too (not compared)" % (
            version, v_pass, v_fail, v_expected, v_notcompared))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--expected", default=os.path.join(HERE, "expected_differences.txt"),
                    help="the expected-differences file (default: the suite's own)")
    ap.add_argument("--venv", action="append", metavar="DIR[=TREE]",
                    help="a venv to run instead of the pinned ones (repeatable; DIR relative "
                         "to the repository; TREE %s, default from the framework's major "
                         "version)" % " or ".join(TREES))
    args = ap.parse_args()
    versions = VERSIONS
    if args.venv:
        versions = []
        for spec in args.venv:
            venv, _, tree = spec.partition("=")
            if tree and tree not in TREES:
                ap.error("--venv %s: TREE is one of %s" % (spec, ", ".join(TREES)))
            versions.append((venv, tree or None))
    binary = os.path.abspath(args.binary)
    src_root = os.environ.get("P2S_PADDLE_TESTS", os.path.join(HERE, "paddle-tests"))
    jobs = int(os.environ.get("P2S_CONFORMANCE_JOBS", min(4, os.cpu_count() or 1)))
    timeout = int(os.environ.get("P2S_CONFORMANCE_TIMEOUT", 600))
    keep = os.environ.get("P2S_CONFORMANCE_KEEP") == "1"
    t0 = time.time()

    expected = read_expected(args.expected)
    used = set()
    global WORK
    work = WORK = tempfile.mkdtemp(prefix="p2s-conformance.")
    try:
        if not os.path.isdir(src_root):
            fail("no PaddlePaddle test tree at %s (set P2S_PADDLE_TESTS)" % src_root,
                 len(versions))
            vers = []
        else:
            vers = [v for v in (setup_version(venv, tree, src_root, work, binary)
                                for venv, tree in versions) if v]
        runs = [r for v in vers for f in v["files"] for r in (f["base"], f["p2s"]) if r]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(lambda r: r(timeout), runs))
        for v in vers:
            compare(v, expected, used)
        for key in sorted(expected):
            for version in sorted(v["version"] for v in vers
                                  if version_matches(key[0], v["version"])
                                  and (key, v["version"]) not in used):
                fail("expected difference %s %s no longer applies on %s (no such test passing "
                     "untranspiled there): remove it from %s, or narrow its VERSION" % (
                         key[0], key[1], version, os.path.basename(args.expected)))
    finally:
        if keep:
            say("conformance: work directory kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    say("conformance: finished in %ds" % (time.time() - t0))
    say("conformance: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
