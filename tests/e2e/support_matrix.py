"""Regenerate (or check) docs/SUPPORT.md: every e2e case run three ways on the installed
framework, each cell from this run.

    .venv/bin/python tests/e2e/support_matrix.py        # rewrite this version's table
    .venv-2.6/bin/python tests/e2e/support_matrix.py
    .venv/bin/python tests/e2e/support_matrix.py --check   # exit 1 if the doc's table differs

One run fills the table of the framework version it runs on and leaves the other's alone.
Columns: the original program in eager mode; the original under the framework's own
`paddle.jit.to_static(full_graph=True)` compared with eager; the program transpiled by
pylayer2static in every mode of `harness.MODES` (on 2.6 also the modes a case leaves out
of its `MODES_2_6`, so the framework bugs show in the table).
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
warnings.simplefilter("ignore")

import paddle  # noqa: E402

import harness  # noqa: E402
import tree_cases  # noqa: E402

DOC = os.path.join(REPO, "docs", "SUPPORT.md")
CASES_DIR = os.path.join(HERE, "cases")
COMMAND = "tests/e2e/support_matrix.py"

# Feature groups, for the row labels (a case not listed goes under "other").
ITEMS = {
    "1 arguments": ["request_full", "keyword_order", "keyword_swap", "nontensor_args", "varargs_kwargs",
                    "list_input", "tuple_input"],
    "2 outputs": ["multi_outputs", "nested_outputs", "unused_outputs"],
    "3 gradients": ["none_grad_stop_gradient", "ctx_flags", "double_backward"],
    "4 context": ["saved_tensors", "tensor_attr"],
    "5 bodies": ["request_anchor", "helpers", "control_flow", "nested_pylayer", "many_applies",
                 "under_amp", "under_no_grad", "under_recompute"],
    "6 classes": ["inheritance", "decorators", "name_mangling", "several_pylayers", "generic_path",
                  "dynamic_apply"],
    "7 across modules": [f"tree:{n}" for n in tree_cases.case_names()],
    "8 eager's slot rules": ["list_structures", "star_kwonly_kwargs", "fewer_grads_lora", "forward_only",
                             "inplace_writes", "decorator_forms"],
    "9 real-world code": [os.path.splitext(f)[0] for f in sorted(os.listdir(CASES_DIR)) if f.startswith("real_")],
}


def _item(case: str) -> str:
    for item, cases in ITEMS.items():
        if case in cases:
            return item
    return "other"


def reason(exc: BaseException) -> str:
    """A short, run-independent description of why a cell failed."""
    # Generated variable names (`set_value_3.tmp_0`) count what the process built before.
    text = re.sub(r"\b([A-Za-z]\w*?)_\d+\.tmp_\d+", r"\1_N.tmp_N", str(exc))
    if isinstance(exc, AssertionError):
        m = re.search(r"gradient of (\w+) missing", text)
        if m:
            return f"no gradient for {m.group(1)}"
        m = re.search(r"gradient of (\w+): eager has none", text)
        if m:
            return f"a gradient for {m.group(1)}, eager has none"
        m = re.search(r"gradient of (\w+)", text)
        if m:
            return f"wrong gradient of {m.group(1)}"
        for key, say in (("forward output", "wrong outputs"), ("training losses", "wrong training losses"),
                         ("holds no pylayer op", "no pylayer op in the program"),
                         ("output tensor(s)", "wrong number of outputs")):
            if key in text:
                return say
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    last = lines[0] if lines else ""
    for line in lines:  # dy2static wraps the error: the framework's own message is last
        if re.match(r"^\w+(Error|Exception): ", line) or line == type(exc).__name__:
            last = line
    if last == type(exc).__name__:
        last = ""
    last = re.sub(r"^\w+(Error|Exception): ", "", last)
    last = re.sub(r"\(at /paddle/\S+\)", "", last)
    last = re.sub(r"/\S+/", "", last)
    last = re.sub(r"0x[0-9a-f]+", "0x…", last)
    last = last.replace("|", "/").replace("`", "'").strip()
    if len(last) > 90:
        last = last[:87].rstrip() + "…"
    return f"{type(exc).__name__}: {last}" if last else type(exc).__name__


def attempt(fn: Callable[[], Any]) -> Optional[str]:
    """None when `fn()` runs without error, else the reason it failed."""
    try:
        fn()
        return None
    except Exception as exc:  # noqa: BLE001 - every failure is a table cell
        if os.environ.get("P2S_SUPPORT_DEBUG"):
            traceback.print_exc()
        return reason(exc)
    finally:
        if not paddle.in_dynamic_mode():
            paddle.disable_static()


def _transpile(binary: str, path: str, out_dir: str) -> str:
    out = os.path.join(out_dir, os.path.basename(path))
    proc = subprocess.run([binary, path, "-o", out], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{binary} {path} -o {out} exited {proc.returncode}:\n{proc.stderr}")
    return out


def _description(module: Any) -> str:
    doc = (module.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split()).replace("|", "/")


def _pylayer2static_cell(results: Dict[str, Optional[str]], expected_to_run: Optional[List[str]] = None) -> str:
    """✅ for the modes equal to eager, ❌ and why for the others; a mode the case leaves out
    of its MODES_2_6 is marked as the framework bug named there."""
    good = [m for m, r in results.items() if r is None]
    bad = [(m, r) for m, r in results.items() if r is not None]
    if not bad:
        return f"✅ all {len(good)} modes equal"
    parts = [f"✅ {', '.join(good)}"] if good else []
    for mode, why in bad:
        known = expected_to_run is not None and mode not in expected_to_run
        parts.append(f"❌ {mode}{' (framework bug, see the case)' if known else ''}: {why}")
    return "<br>".join(parts)


def _reference(original: Any) -> Tuple[Optional[str], Any]:
    """(None, (state, eager result)) of a case, or (why eager failed, None)."""
    box: Dict[str, Any] = {}

    def eager() -> None:
        box["state"] = harness.reference_state(original)
        box["expected"] = harness.run_eager(original, box["state"])

    failed = attempt(eager)
    return failed, (None if failed else (box["state"], box["expected"]))


def _framework_cells(name: str, original: Any) -> Tuple[str, str]:
    """(eager, framework to_static) cells of a model case."""
    failed, ref = _reference(original)
    if failed:
        return f"❌ {failed}", "—"
    state, expected = ref
    fw = attempt(lambda: harness.check_mode(original, original, "to_static", state, expected))
    return "✅ runs", "✅ equal" if fw is None else f"❌ {fw}"


def _model_row(name: str, original: Any, transpiled: Any, framework: Tuple[str, str]) -> Tuple[str, ...]:
    failed, ref = _reference(original)
    if failed:
        return name, _description(original), framework[0], framework[1], "—"
    state, expected = ref
    # A mode the case leaves out (MODES_2_6) is not run: its comment names the framework
    # bug, and such failures need not be the same from run to run.
    modes = list(harness.case_modes(original))
    results = {mode: attempt(lambda mode=mode: harness.check_mode(transpiled, original, mode, state, expected))
               if mode in modes else "a framework bug rules it out"
               for mode in harness.MODES}
    cell = _pylayer2static_cell(results, modes)
    return name, _description(original), framework[0], framework[1], cell


def _double_backward(module: Any) -> Tuple[Optional[str], Callable[[Any, str], Optional[str]]]:
    """(why eager failed or None, check(module, mode) -> None or why it differs)."""
    import test_double_backward as dbl

    box: Dict[str, Any] = {}

    def eager() -> None:
        box["want"] = dbl.run(module, "eager")

    def check(other: Any, mode: str) -> Optional[str]:
        def compare() -> None:
            for g, w in zip(dbl.run(other, mode), box["want"]):
                assert abs(g - w).max() <= 1e-6 * max(1.0, abs(w).max()), "forward output"
        return attempt(compare)

    return attempt(eager), check


def _double_backward_path() -> str:
    import test_double_backward as dbl

    return dbl.PATH


def framework_cells() -> Dict[str, Tuple[str, str]]:
    """{case: (eager, framework to_static)} for every case, the originals only. Run in a
    process of its own (`--framework`): importing pylayer2static_runtime changes how the
    framework's dy2static treats PyLayer classes (see the runtime's dy2static.py)."""
    cells: Dict[str, Tuple[str, str]] = {}
    for name, path in _case_files():
        cells[name] = _framework_cells(name, harness.load_module(path, f"support_original_{name}"))
    original = harness.load_module(_double_backward_path(), "support_double_backward")
    failed, check = _double_backward(original)
    if failed:
        cells["double_backward"] = (f"❌ {failed}", "—")
    else:
        fw = check(original, "to_static")
        cells["double_backward"] = ("✅ runs", "✅ equal" if fw is None else f"❌ {fw}")
    for name, original in tree_cases.ORIGINALS.items():
        cells[f"tree:{name}"] = _framework_cells(f"tree:{name}", original)
    assert "pylayer2static_runtime" not in sys.modules, "the framework column ran with the runtime imported"
    return cells


def _case_files() -> List[Tuple[str, str]]:
    return [(f[:-3], os.path.join(CASES_DIR, f)) for f in sorted(os.listdir(CASES_DIR)) if f.endswith(".py")]


def _framework_cells_in_child() -> Dict[str, Tuple[str, str]]:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--framework"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"support_matrix --framework failed:\n{proc.stderr[-3000:]}")
    marker = "P2S-FRAMEWORK-CELLS "
    line = next(line for line in proc.stdout.splitlines() if line.startswith(marker))
    return {k: tuple(v) for k, v in json.loads(line[len(marker):]).items()}


def rows(binary: str) -> List[Tuple[str, ...]]:
    framework = _framework_cells_in_child()
    out: List[Tuple[str, ...]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in _case_files():
            original = harness.load_module(path, f"support_original_{name}")
            transpiled = harness.load_module(_transpile(binary, path, tmp), f"support_transpiled_{name}")
            out.append(_model_row(name, original, transpiled, framework[name]))
        path = _double_backward_path()
        original = harness.load_module(path, "support_double_backward")
        transpiled = harness.load_module(_transpile(binary, path, tmp), "support_double_backward_p2s")
        failed, check = _double_backward(original)
        cell = "—" if failed else _pylayer2static_cell(
            {mode: check(transpiled, mode) for mode in ("eager", "to_static", "static")})
        out.append(("double_backward", _description(original), *framework["double_backward"], cell))
        tree_out = os.path.join(tmp, "tree")
        tree_cases.transpile_tree(binary, tree_out)
        transpiled_tree = tree_cases.import_cases(tree_out)
        for name, original in tree_cases.ORIGINALS.items():
            out.append(_model_row(f"tree:{name}", original, transpiled_tree[name], framework[f"tree:{name}"]))
    order = {case: i for i, case in enumerate(c for cases in ITEMS.values() for c in cases)}
    return sorted(out, key=lambda row: (_item(row[0]), order.get(row[0], 1 << 20), row[0]))


def _ir() -> str:
    return "PIR" if paddle.__version__.startswith("3") else "legacy Program IR"


def table(binary: str) -> str:
    lines = [
        f"## paddlepaddle {paddle.__version__} ({_ir()}), Python {sys.version.split()[0]}",
        "",
        "| feature | case | what it covers | eager | framework `to_static` | pylayer2static |",
        "|---|---|---|---|---|---|",
    ]
    counts = {"fw": 0, "p2s": 0, "p2s_known": 0}
    body = rows(binary)
    for name, desc, eager, fw, p2s in body:
        counts["fw"] += fw.startswith("✅")
        counts["p2s"] += p2s.startswith("✅ all")
        failing = [part for part in p2s.split("<br>") if part.startswith("❌")]
        counts["p2s_known"] += bool(failing) and all("(framework bug" in part for part in failing)
        lines.append(f"| {_item(name)} | `{name}` | {desc} | {eager} | {fw} | {p2s} |")
    lines += [
        "",
        f"{len(body)} cases: the framework's own `to_static` equals eager in {counts['fw']}; "
        f"pylayer2static equals eager in every mode in {counts['p2s']}, and in every mode but "
        f"those a framework bug rules out in {counts['p2s_known']} more.",
    ]
    return "\n".join(lines)


HEADER = f"""# What runs where: PyLayer features by path

Generated by `{COMMAND}` from a test run on each framework version; do not edit by hand.
Regenerate (after `make`, from the repository root; each run rewrites its own version's table):

    .venv/bin/python {COMMAND} && .venv-2.6/bin/python {COMMAND}

Check that the committed tables match a fresh run (exit 1 and a diff when not):

    .venv/bin/python {COMMAND} --check && .venv-2.6/bin/python {COMMAND} --check

Columns, for each case of `tests/e2e` (`cases/*.py`, `special/double_backward.py`, and the
modules of `packages/p2scases/models/` transpiled in tree mode):

- **eager**: the original program runs in dynamic mode (the reference of the other columns);
- **framework `to_static`**: the original, untranspiled program under
  `paddle.jit.to_static(full_graph=True)` (the framework's own dy2static PyLayer path),
  outputs and the gradients of every input and parameter compared with eager;
- **pylayer2static**: the transpiled program in every mode of `tests/e2e/harness.py` —
  `eager`, `to_static` (full_graph=True), `sot` (bytecode path), `static` (a pure static
  program with `paddle.static.gradients`), `jit_save` (save, `jit.load` and an inference
  predictor; forward only), `train` (SGD losses under to_static and as a static program) —
  each compared with eager (rtol 1e-6, atol 1e-7; a case's own `TOLERANCE` says why when
  it has one). On 2.6.2 the modes a case leaves out of its `MODES_2_6` run here too, so
  the framework bugs named there show as ❌.

A ❌ gives the error type and the framework's message, or what differed from eager.
"""


def _section_markers(version: str) -> Tuple[str, str]:
    return f"<!-- support-matrix {version} begin -->", f"<!-- support-matrix {version} end -->"


def _sections(text: str) -> Dict[str, str]:
    found = {}
    for m in re.finditer(r"<!-- support-matrix (\S+) begin -->\n(.*?)\n<!-- support-matrix \1 end -->", text, re.S):
        found[m.group(1)] = m.group(2)
    return found


def render(sections: Dict[str, str]) -> str:
    parts = [HEADER]
    for version in sorted(sections, key=lambda v: [int(x) for x in re.findall(r"\d+", v)], reverse=True):
        begin, end = _section_markers(version)
        parts.append(f"{begin}\n{sections[version]}\n{end}\n")
    return "\n".join(parts)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with docs/SUPPORT.md, write nothing")
    parser.add_argument("--bin", default=os.environ.get("P2S_BIN", os.path.join(REPO, "build", "pylayer2static")))
    parser.add_argument("--doc", default=DOC)
    parser.add_argument("--framework", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.framework:
        print("P2S-FRAMEWORK-CELLS " + json.dumps(framework_cells()))
        return 0
    if not os.access(args.bin, os.X_OK):
        print(f"support_matrix: pylayer2static binary not found at {args.bin} (run make, or --bin)", file=sys.stderr)
        return 2
    fresh = table(args.bin)
    old = open(args.doc, encoding="utf-8").read() if os.path.exists(args.doc) else ""
    sections = _sections(old)
    version = paddle.__version__
    if args.check:
        if sections.get(version) == fresh and render(sections) == old:
            print(f"support_matrix: {args.doc} is up to date for paddlepaddle {version}")
            return 0
        diff = difflib.unified_diff((sections.get(version) or "").splitlines(), fresh.splitlines(),
                                    f"{args.doc} ({version})", "fresh run", lineterm="")
        print("\n".join(diff))
        print(f"support_matrix: {args.doc} is stale for paddlepaddle {version}; regenerate with "
              f"{sys.executable} {COMMAND}", file=sys.stderr)
        return 1
    sections[version] = fresh
    os.makedirs(os.path.dirname(args.doc), exist_ok=True)
    tmp = args.doc + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(render(sections))
    os.replace(tmp, args.doc)
    print(f"support_matrix: wrote the paddlepaddle {version} table of {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
