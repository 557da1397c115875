"""support_table.py --write|--check|--print OUTDIR VERSION... — the `all-versions` section of
docs/SUPPORT.md from a `make matrix` run (tests/matrix/run.sh leaves each version's results in
OUTDIR/VERSION/: e2e.xml, conformance.log, support.md, python, venv). Standard library only.

--write rewrites the section, --check exits 1 with a diff when the committed one differs from
the run, --print prints it. Nothing in it depends on the run's timing or paths, so the same
results give the same bytes.

The section sits in docs/SUPPORT.md as one more `<!-- support-matrix NAME begin/end -->` block
(NAME `all-versions`), after the features table: tests/e2e/support_matrix.py rewrites the
file from those blocks (keeping each, and putting this one last), so both generators keep
each other's output and each one's --check passes.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

import doc_section  # noqa: E402

DOC = os.path.join(REPO, "docs", "SUPPORT.md")
NAME = "all-versions"


def read(path, default=""):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return default


def e2e_result(d):
    """(passed, failed, skipped, [failed test ids]) from pytest's junit XML, or None."""
    try:
        root = ET.parse(os.path.join(d, "e2e.xml")).getroot()
    except (OSError, ET.ParseError):
        return None
    passed = failed = skipped = 0
    failures = []
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if kinds & {"failure", "error"}:
            failed += 1
            failures.append(name)
        elif "skipped" in kinds:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped, failures


def conformance_result(d, version):
    """(passed, failed, expected differences, [FAIL lines]) from the suite's output, or None."""
    text = read(os.path.join(d, "conformance.log"))
    last = re.findall(r"^conformance: (\d+) passed, (\d+) failed", text, re.M)
    if not last:
        return None
    expected = len(re.findall(rf"^conformance: expected difference: {re.escape(version)} ", text, re.M))
    fails = [line[len("conformance: FAIL "):] for line in text.splitlines() if line.startswith("conformance: FAIL ")]
    fails = [re.sub(r"^" + re.escape(version) + " ", "", f) for f in fails]
    # Drop run-specific detail (timings) so the table is a function of the outcomes.
    fails = [re.sub(r" \(\d+(\.\d+)?s\)", "", f) for f in fails]
    return int(last[-1][0]), int(last[-1][1]), expected, fails


def support_summary(d, version):
    """The counts of the version's summary line of support_matrix.py, or None."""
    m = re.search(r"^- paddlepaddle " + re.escape(version) + r" \([^)]*\): (\d+) cases; the framework's own "
                  r"`to_static` equals eager in (\d+); pylayer2static equals eager in every mode in (\d+), and in "
                  r"every mode but those a framework bug rules out in (\d+) more\.$",
                  read(os.path.join(d, "support.md")), re.M)
    return tuple(int(x) for x in m.groups()) if m else None


def ir(version):
    return "PIR" if int(version.split(".")[0]) >= 3 else "legacy Program IR"


def ok(flag):
    return "✅" if flag else "❌"


def render(outdir, versions):
    rows, notes = [], []
    for v in sorted(versions, key=lambda s: [int(x) for x in s.split(".")], reverse=True):
        d = os.path.join(outdir, v)
        python = read(os.path.join(d, "python")).strip() or "?"
        e2e = e2e_result(d)
        if e2e is None:
            e2e_cell = "❌ did not run"
            notes.append(f"- {v}, e2e: did not run (no venv or pytest crashed)")
        else:
            p, f, s, failures = e2e
            e2e_cell = f"{ok(f == 0 and p > 0)} {p} passed" + (f", {f} failed" if f else "") + (f", {s} skipped" if s else "")
            notes += [f"- {v}, e2e: `{name}` failed" for name in failures]
        conf = conformance_result(d, v)
        if conf is None:
            conf_cell = "❌ did not run"
            notes.append(f"- {v}, conformance: did not run ({read(os.path.join(d, 'conformance.log')).strip()[:200] or 'no output'})")
        else:
            p, f, x, fails = conf
            conf_cell = f"{ok(f == 0 and p > 0)} {p} passed" + (f", {f} failed" if f else "")
            if x:
                conf_cell += f" ({x} expected difference{'s' if x > 1 else ''})"
            notes += [f"- {v}, conformance: {line.replace('|', '/')}" for line in fails]
        summary = support_summary(d, v)
        if summary is None:
            fw_cell = p2s_cell = "❌ did not run"
            notes.append(f"- {v}, support_matrix.py: did not run")
        else:
            n, fw, p2s, known = summary
            fw_cell = f"{fw} of {n} cases"
            p2s_cell = f"{p2s} of {n} cases" + (f" (+{known} but the modes a framework bug rules out)" if known else "")
        rows.append(f"| {v} | {ir(v)} | {python} | {e2e_cell} | {conf_cell} | {fw_cell} | {p2s_cell} |")
    newest, oldest = max(versions, key=lambda s: [int(x) for x in s.split(".")]), \
        min(versions, key=lambda s: [int(x) for x in s.split(".")])
    lines = [
        f"## Every released version, {oldest} to {newest} (`make matrix`)",
        "",
        "Generated by `tests/matrix/run.sh --write` (`make matrix`) from a run on each paddlepaddle",
        "CPU release from 2.6.2 on, the newest patch of each minor line as the package index lists",
        "them; do not edit by hand. `make matrix-check` runs it again and exits 1 when this table",
        "differs. Each version has its own venv (the pinned `.venv` and `.venv-2.6`, or",
        "`build/matrix/venv-X.Y.Z`); the transpiled code is the same on all of them.",
        "",
        "- **e2e**: the tests of `tests/e2e` (every case in every mode of its harness, the error",
        "  cases, tree mode, double backward);",
        "- **conformance**: `tests/conformance`, PaddlePaddle's own PyLayer tests transpiled: each",
        "  test that passes untranspiled passes transpiled, but the expected differences it lists;",
        "- the last two columns: the summary counts of `tests/e2e/support_matrix.py` run on that",
        "  version (the per-case columns of the pinned versions are in the table above; the others",
        "  are left in `build/matrix/X.Y.Z/support.md`): in how many cases the framework's own",
        "  `to_static(full_graph=True)` of the untranspiled program equals eager, and in how many",
        "  the transpiled program equals eager in every mode.",
        "",
        "| paddlepaddle | IR | Python | e2e | conformance | framework `to_static` equals eager | pylayer2static equals eager in every mode |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]
    lines += ["", "Failures:", "", *notes] if notes else ["", "No failures."]
    return "\n".join(lines)


def main(argv=None):
    parser = doc_section.arguments(__doc__.split("\n\n")[0], DOC)
    parser.add_argument("outdir")
    parser.add_argument("versions", nargs="+")
    args = parser.parse_args(argv)
    return doc_section.finish(args, NAME, render(args.outdir, args.versions), "matrix", "make matrix")

if __name__ == "__main__":
    sys.exit(main())
