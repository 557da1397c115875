"""Regenerate (or check) docs/SUPPORT.md: every e2e case run three ways on the installed
framework, each cell from this run.

    .venv/bin/python tests/e2e/support_matrix.py        # rewrite this version's table
    .venv-2.6/bin/python tests/e2e/support_matrix.py
    .venv/bin/python tests/e2e/support_matrix.py --check   # exit 1 if the doc's table differs

One run records the cells of the framework version it runs on (docs/support-data/) and
rewrites the one table of docs/SUPPORT.md from every version's.
Columns: the original program in eager mode; the original under the framework's own
`paddle.jit.to_static(full_graph=True)` compared with eager; the program transpiled by
pylayer2static in every mode of `harness.MODES` (on 2.6 also the modes a case leaves out
of its `MODES_2_6`, so the framework bugs show in the table).
"""
import argparse
import difflib
import importlib
import importlib.util
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
ERRORS_DIR = os.path.join(HERE, "errors")
COMMAND = "tests/e2e/support_matrix.py"

# Library classes run from their installed package (`pylayer2static run --package`): row name,
# the test module that installs the package and trains with it.
LIBRARY_ROWS = {"library:FusedHeadAndCrossEntropy": "test_run_paddlenlp_fused_head"}
# Feature groups, for the row labels (a case not listed goes under "other").
ITEMS = {
    "1 arguments": ["request_full", "keyword_order", "keyword_swap", "nontensor_args", "varargs_kwargs",
                    "list_input", "tuple_input"],
    "2 outputs": ["multi_outputs", "nested_outputs", "unused_outputs", "aliasing"],
    "3 gradients": ["none_grad_stop_gradient", "ctx_flags", "double_backward", "train_after_load"],
    "4 context": ["saved_tensors", "tensor_attr"],
    "5 bodies": ["request_anchor", "helpers", "control_flow", "nested_pylayer", "many_applies",
                 "under_amp", "under_no_grad", "under_recompute"],
    "6 classes": ["inheritance", "decorators", "name_mangling", "several_pylayers", "generic_path",
                  "dynamic_apply"],
    "7 across modules": [f"tree:{n}" for n in tree_cases.case_names()],
    "8 eager's slot rules": ["list_structures", "star_kwonly_kwargs", "fewer_grads_lora", "forward_only",
                             "inplace_writes", "decorator_forms"],
    "9 real-world code": [os.path.splitext(f)[0] for f in sorted(os.listdir(CASES_DIR)) if f.startswith("real_")]
    + list(LIBRARY_ROWS),
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


def _child_error(stderr: str) -> Exception:
    """The error a fresh process ended with (its last `Name: message` line), as an exception
    of that name; the registry id paddle 3.3.1 names differs from run to run."""
    lines = [line for line in stderr.splitlines() if re.match(r"^[\w.]+: ", line)]
    name, _, message = (lines[-1] if lines else f"RuntimeError: {stderr.strip()[-200:]}").partition(": ")
    message = re.sub(r"\bUnique_id \d+", "Unique_id N", message)
    return type(name.rsplit(".", 1)[-1], (Exception,), {})(message)


def _after_load(original: Any, module: Any, import_dir: Optional[str], runtime: bool) -> Dict[str, Optional[str]]:
    """{model: None, or why fine-tuning `module`'s export after jit.load in a fresh process
    differs from training `original` eagerly} (test_train_after_load.py)."""
    import test_train_after_load as after_load

    def check(name: str) -> None:
        state = after_load.initial_state(original, name)
        want = after_load.train_original(original, name, state)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                got = after_load.train_after_load(module, name, state, tmp, import_dir, runtime)
            except after_load.TrainingFailed as exc:
                raise _child_error(str(exc)) from None
        after_load.assert_trained_alike(got, want)

    return {name: attempt(lambda name=name: check(name)) for name in original.MODELS}


def _models_cell(results: Dict[str, Optional[str]]) -> str:
    if all(why is None for why in results.values()):
        return f"✅ all {len(results)} models equal"
    return "<br>".join(f"✅ {name}" if why is None else f"❌ {name}: {why}" for name, why in results.items())


def _framework_after_load() -> Tuple[str, str]:
    import test_train_after_load as after_load

    original = harness.load_module(after_load.PATH, "support_train_after_load")
    eager = {name: attempt(lambda name=name: original.train(getattr(original, name)(), original.batches()))
             for name in original.MODELS}
    if any(why is not None for why in eager.values()):
        return _models_cell(eager), "—"
    return "✅ runs", _models_cell(_after_load(original, original, None, runtime=False))


def _framework_jobs() -> List[Tuple[str, Callable[[], Tuple[str, str]]]]:
    """(case, its (eager, framework to_static) cells) for every case, the originals only."""
    jobs: List[Tuple[str, Callable[[], Tuple[str, str]]]] = [
        (name, lambda name=name, path=path: _framework_cells(
            name, harness.load_module(path, f"support_original_{name}")))
        for name, path in _case_files()
    ]
    jobs.append(("double_backward", _framework_double_backward))
    jobs.append(("train_after_load", _framework_after_load))
    jobs.extend((f"tree:{name}", lambda name=name, original=original: _framework_cells(f"tree:{name}", original))
                for name, original in tree_cases.ORIGINALS.items())
    return jobs


def _framework_double_backward() -> Tuple[str, str]:
    original = harness.load_module(_double_backward_path(), "support_double_backward")
    failed, check = _double_backward(original)
    if failed:
        return f"❌ {failed}", "—"
    fw = check(original, "to_static")
    return "✅ runs", "✅ equal" if fw is None else f"❌ {fw}"


def forget_program_records() -> None:
    """Empty dy2static's per-program records, as a fresh process has them, between the cases of
    the framework's own path: a failed build or jit.save of that path leaves its program's
    records (keyed by id(program)) behind, and a later case's program given the freed id
    inherits them (another case's parameter: a `KeyError`, a broadcast error, wrong outputs),
    so a case's result depended on memory reuse (paddle 3.3.1 and 2.6.2)."""
    from paddle.jit.dy2static.program_translator import ProgramTranslator

    translator = ProgramTranslator.get_instance()
    where = "paddle.jit.dy2static.parameter_recorder"  # 3.3.1; 2.6.2 keeps it in pir_dy2static
    if importlib.util.find_spec(where) is None:
        where = "paddle.jit.pir_dy2static.parameter_recorder"
    recorder = importlib.import_module(where)
    for owner in (translator._params_recorder, translator._inplace_map,
                  recorder._global_parameter_recorder, recorder._global_inplace_map):
        for table in vars(owner).values():
            if isinstance(table, dict):
                table.clear()


FRAMEWORK_MARKER = "P2S-FRAMEWORK-CELL "


def print_framework_cells(start: int) -> None:
    """The framework column from case number `start` on, one line per case as it is done.
    Run in a process of its own (`--framework`): importing pylayer2static_runtime changes how
    the framework's dy2static treats PyLayer classes (see the runtime's dy2static.py)."""
    for name, cells in _framework_jobs()[start:]:
        print(FRAMEWORK_MARKER + json.dumps([name, list(cells())]), flush=True)
        forget_program_records()
    assert "pylayer2static_runtime" not in sys.modules, "the framework column ran with the runtime imported"


def _case_files() -> List[Tuple[str, str]]:
    return [(f[:-3], os.path.join(CASES_DIR, f)) for f in sorted(os.listdir(CASES_DIR)) if f.endswith(".py")]


def _framework_cells_in_child() -> Dict[str, Tuple[str, str]]:
    """The framework column, from children that each go on where the last one died.

    The framework's own to_static can abort the process (paddle 3.3.1: SIGABRT in a case after
    failed builds of others, whose records dy2static keeps by `id(program)`; the runtime's
    dy2static.py forgets them, but this column runs without it), depending on what ran before.
    A case that aborts a fresh child, as its first case, is an abort of its own."""
    cells: Dict[str, Tuple[str, str]] = {}
    count = len(_framework_jobs())
    while len(cells) < count:
        first = len(cells)
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--framework", "--start", str(first)],
                              capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith(FRAMEWORK_MARKER):
                name, pair = json.loads(line[len(FRAMEWORK_MARKER):])
                cells[name] = tuple(pair)
        if proc.returncode == 0 and len(cells) == count:
            break
        if proc.returncode > 0:  # an error, not a signal
            raise SystemExit(f"support_matrix --framework failed:\n{proc.stderr[-3000:]}")
        if len(cells) == first:
            name = _framework_jobs()[first][0]
            cells[name] = ("—", f"❌ the process died of signal {-proc.returncode}")
    return cells


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
        import test_train_after_load as after_load

        original = harness.load_module(after_load.PATH, "support_train_after_load")
        import_dir = os.path.join(tmp, "importable")
        os.makedirs(import_dir)
        transpiled = after_load.importable_copy(_transpile(binary, after_load.PATH, tmp), import_dir)
        cell = _models_cell(_after_load(original, transpiled, import_dir, runtime=True))
        out.append(("train_after_load", _description(original), *framework["train_after_load"], cell))
        tree_out = os.path.join(tmp, "tree")
        tree_cases.transpile_tree(binary, tree_out)
        transpiled_tree = tree_cases.import_cases(tree_out)
        for name, original in tree_cases.ORIGINALS.items():
            out.append(_model_row(f"tree:{name}", original, transpiled_tree[name], framework[f"tree:{name}"]))
        out.extend(_library_row(name, module, binary, tmp) for name, module in LIBRARY_ROWS.items())
    order = {case: i for i, case in enumerate(c for cases in ITEMS.values() for c in cases)}
    return sorted(out, key=lambda row: (_item(row[0]), order.get(row[0], 1 << 20), row[0]))


def _library_row(name: str, module_name: str, binary: str, tmp: str) -> Tuple[str, ...]:
    """A library class's row: the user's script run as it is (eager, and the framework's own
    `to_static`) and through `pylayer2static run --package` (to_static, static, jit_save)."""
    module = __import__(module_name)
    site = os.path.join(tmp, f"{module_name}-site")
    os.makedirs(site)
    module.install(site)
    framework = module.train(site, os.path.join(tmp, f"{module_name}-framework"), transpiled=False, binary=binary)
    if "error" in framework:  # the script runs eager first: it failed there
        return name, module.SUPPORT_ROW, f"❌ {framework['error']}", "—", "—"
    fw = module.differences(framework)["to_static"]
    transpiled = module.differences(module.train(site, os.path.join(tmp, f"{module_name}-p2s"), transpiled=True,
                                                 binary=binary))
    cell = _pylayer2static_cell({mode: found[0] if found else None for mode, found in transpiled.items()})
    return name, module.SUPPORT_ROW, "✅ runs", "✅ equal" if not fw else f"❌ {fw[0]}", cell


def _ir(version: str) -> str:
    return "PIR" if version.startswith("3") else "legacy Program IR"


def _test_path(case: str) -> str:
    """The file of a case, relative to docs/."""
    if case.startswith("tree:"):
        return f"../tests/e2e/packages/p2scases/models/{case[5:]}.py"
    if case in ("double_backward", "train_after_load"):
        return f"../tests/e2e/special/{case}.py"
    if case in LIBRARY_ROWS:
        return f"../tests/e2e/{LIBRARY_ROWS[case]}.py"
    return f"../tests/e2e/cases/{case}.py"


# Mistakes that fail while the program runs (tests/e2e/errors/CASE.py, each with its built-in
# twin CASE_twin.py: the same mistake in a model of built-in ops), and the modes they run in.
RUN_TIME_CASES = ["run_time_backward", "run_time_forward", "nan_backward"]
RUN_TIME_MODES = ("to_static", "static")


def _named_frames(path: str, run: Callable[[], BaseException]) -> str:
    """A cell: the error's type and the frames of `path` its message names (line, function)."""
    try:
        exc = run()
    except AssertionError as no_error:
        return f"ran: {no_error}"
    frames = harness.frames_in(path, str(exc))
    names = ", ".join(f"{line} `{name}`" for line, name in frames) or "no line of it"
    return f"{type(exc).__name__}: {names}"


def run_time_errors(binary: str) -> Dict[str, Dict[str, Any]]:
    """{case: {"covers", MODE: {"pylayer2static", "twin"}}}: what the run-time error of each
    case names, transpiled and as its built-in twin."""
    found: Dict[str, Dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in RUN_TIME_CASES:
            path = _transpile(binary, os.path.join(ERRORS_DIR, case + ".py"), tmp)
            module = harness.load_module(path, f"support_error_{case}")
            twin_path = os.path.join(ERRORS_DIR, case + "_twin.py")
            twin = harness.load_module(twin_path, f"support_error_twin_{case}")
            found[case] = {"covers": _description(module)}
            for mode in RUN_TIME_MODES:
                found[case][mode] = {
                    "pylayer2static": _named_frames(path, lambda: harness.run_time_error(module, mode)),
                    "twin": _named_frames(twin_path, lambda: harness.run_time_error(twin, mode)),
                }
    return found


def run_data(binary: str) -> Dict[str, Any]:
    """This framework version's cells: {"version", "ir", "python", "rows": {case: {...}},
    "run_time_errors": {case: {...}}}."""
    body = rows(binary)
    return {
        "version": paddle.__version__,
        "ir": _ir(paddle.__version__),
        "python": sys.version.split()[0],
        "rows": {name: {"covers": desc, "eager": eager, "framework": fw, "pylayer2static": p2s}
                 for name, desc, eager, fw, p2s in body},
        "run_time_errors": run_time_errors(binary),
    }


def _summary(data: Dict[str, Any]) -> str:
    cells = list(data["rows"].values())
    fw = sum(c["framework"].startswith("✅") for c in cells)
    p2s = sum(c["pylayer2static"].startswith("✅ all") for c in cells)
    known = 0
    for c in cells:
        failing = [part for part in c["pylayer2static"].split("<br>") if part.startswith("❌")]
        known += bool(failing) and all("(framework bug" in part for part in failing)
    return (f"- paddlepaddle {data['version']} ({data['ir']}, Python {data['python']}): {len(cells)} cases; "
            f"the framework's own `to_static` equals eager in {fw}; pylayer2static equals eager in every "
            f"mode in {p2s}, and in every mode but those a framework bug rules out in {known} more.")


def table(runs: List[Dict[str, Any]]) -> str:
    """One table: each case's row, with the three columns of every version run."""
    runs = sorted(runs, key=lambda d: [int(x) for x in re.findall(r"\d+", d["version"])], reverse=True)
    head = "| feature | case | what it covers |" + "".join(
        f" {d['version']} eager | {d['version']} framework `to_static` | {d['version']} pylayer2static |" for d in runs)
    lines = [head, "|---|---|---|" + "---|---|---|" * len(runs)]
    order = {case: i for i, case in enumerate(c for cases in ITEMS.values() for c in cases)}
    names = sorted({name for d in runs for name in d["rows"]},
                   key=lambda n: (_item(n), order.get(n, 1 << 20), n))
    for name in names:
        covers = next(d["rows"][name]["covers"] for d in runs if name in d["rows"])
        cells = "".join(
            " {eager} | {framework} | {pylayer2static} |".format(**d["rows"][name]) if name in d["rows"]
            else " — | — | — |" for d in runs)
        lines.append(f"| {_item(name)} | [`{name}`]({_test_path(name)}) | {covers} |{cells}")
    return "\n".join(lines + [""] + [_summary(d) for d in runs])


HEADER = f"""# What runs where: PyLayer features by path

Generated by `{COMMAND}` from a test run on each framework version; do not edit by hand.
Regenerate (after `make`, from the repository root; each run records its own version's
cells in `docs/support-data/<version>.json` and rewrites the table from every version's):

    .venv/bin/python {COMMAND} && .venv-2.6/bin/python {COMMAND}

Check that the committed table matches a fresh run (exit 1 and a diff when not):

    .venv/bin/python {COMMAND} --check && .venv-2.6/bin/python {COMMAND} --check

Columns, for each case of `tests/e2e` (`cases/*.py`, `special/double_backward.py`,
`special/train_after_load.py`, and the
modules of `packages/p2scases/models/` transpiled in tree mode), per framework version:

- **eager**: the original program runs in dynamic mode (the reference of the other columns);
- **framework `to_static`**: the original, untranspiled program under
  `paddle.jit.to_static(full_graph=True)` (the framework's own dy2static PyLayer path),
  outputs and the gradients of every input and parameter compared with eager;
- **pylayer2static**: the transpiled program in every mode of `tests/e2e/harness.py` —
  `eager`, `to_static` (full_graph=True), `sot` (bytecode path), `static` (a pure static
  program with `paddle.static.gradients`), `jit_save` (save, `jit.load` and an inference
  predictor; forward only), `train` (SGD losses under to_static and as a static program) —
  each compared with eager (rtol 1e-6, atol 1e-7; a case's own `TOLERANCE` says why when
  it has one). On 2.6.2 the modes a case leaves out of its `MODES_2_6` are marked as the
  framework bug named there.

A `library:` row is a class of a library run from its installed package: the user's script
of its test (`tests/e2e/test_run_*.py`) runs as it is (eager, and the framework's own
`to_static`) and through `pylayer2static run --package` (the library transpiled on import), in
the modes that test checks, at its tolerance (rtol 1e-5); the library file is the real one
from the pinned wheel, fetched at test time.

A ❌ gives the error type and the framework's message, or what differed from eager. The
case links to its test.

## Where pylayer2static differs from eager or from the framework, on purpose

- **`ctx.attr = tensor`** (`tensor_attr`): the framework's `to_static` raises
  AttributeError ("'ctx.x = tensor' is not allowed in static mode"); pylayer2static carries
  such attributes to backward like saved tensors, with eager's values and gradients, because
  real PyLayer code does this. PaddlePaddle's own `TestPyLayerWrongUsage`, which expects the
  AttributeError, is therefore a listed difference of the conformance suite
  (`tests/conformance/expected_differences.txt`).
- **`paddle.autograd.backward` inside backward** (Paddle's `RecomputeFunction` style;
  `tests/e2e/errors/autograd_backward.py`): eager accumulates into `.grad`, which no static
  graph has; building backward raises a `PyLayerContractError` naming the class and pointing
  at `paddle.grad` (pass the parameters to `apply` to get their gradients too, as
  `real_recompute_function` does).
- **A tensor backward reaches through a closure** (not as an argument of `apply`, not on
  `ctx`; `tests/e2e/errors/closure_tensor.py`): eager runs it. Under `to_static` on PIR,
  backward is built on a copy of the traced program where that tensor does not exist, so
  building it raises a `PyLayerContractError` saying to pass the tensor to `apply` (the
  framework would fail at run time or abort). Pure static programs run it.
- **to_static in eval mode** (`model.eval()`; `tests/e2e/test_cases.py`
  `test_case_in_eval_mode`, every case): equal to eager on both versions, the program run
  holding no pylayer op. On paddle 2.6.2 that program is a clone for test of the forward
  program, which drops the backward blocks; the framework's own path fails there for a PyLayer
  whose backward holds control flow or another PyLayer (`control_flow`, `nested_pylayer`: "The
  origin parent block id is not found in pruned_progin_block_id_map"), as the transpiled one
  did before the runtime gave the ops of backward's inner blocks backward's role.
- **Forward-only PyLayers** (no backward): eager raises only if a gradient is requested.
  PIR does the same; the legacy IR (2.6.2), which builds backward with the op, refuses the
  op when it is built if an input needs a gradient.
- **`ctx.set_materialize_grads(False)`**: eager passes backward None for an output that
  got no gradient; both IRs' autodiff hand it zeros instead, so a backward that treats None
  as zero (as it must) gives the same numbers, and one that branches on `grad is None` to
  other arithmetic would not (`ctx_flags`, `real_moe_gate` cover the first kind).
- **Backward returns None for an input** (`none_grad_stop_gradient`, `real_lora_frozen_none`,
  `real_lora_quick`): a parameter that gets no gradient keeps `.grad` None, as in eager, in
  every mode and on both versions, so optimizers skip it (zeros would let weight decay and
  momentum move a frozen weight; on 2.6.2 the runtime marks the op's own copy of such an input
  stop-gradient, `legacy/adapter.py` `_no_gradient_stops`). An input of a `to_static` function that
  gets no gradient has `.grad` zeros instead of None: the framework's `run_program` gives
  every input that needs a gradient one, with built-in ops too; so does SOT for parameters,
  which its subgraphs take as inputs (3.3.1, built-in ops too, once a graph is big enough for
  SOT to run it statically). The harness checks all three.
- **Backward returns one tensor for two inputs** (`return dx, db, db`;
  `tests/e2e/test_aliased_gradients.py`): eager (2.6.2 and 3.3.1) gives both inputs that
  very tensor as `.grad`, and when one of them accumulates another gradient (a tied parameter)
  the addition lands in the other's gradient too. The static graph gives each input its own
  value: the gradient eager gives when backward returns a clone. pylayer2static keeps the
  right answer; the test asserts both eager's aliasing and the static result.
- **Double backward** (`paddle.grad(..., create_graph=True)`, gradient penalties, PINN
  residuals; `tests/e2e/test_double_backward.py`): paddle 3.x (PIR) refuses it on the
  framework's own path ("backward function id of pylayer op should be non-negative"); for a
  transpiled PyLayer the runtime inlines the gradient's pylayer op as autodiff builds it, so the
  gradient of a gradient equals eager's, in training too. Backward must read what it saved from
  apply's inputs or outputs (or parameters): a tensor forward computes, saves and does not return
  reaches backward as a copy no gradient goes through, and a double backward through it raises
  `PyLayerContractError` naming the class. paddle 2.6.2 (legacy IR) cannot differentiate a
  pylayer op's backward, whoever built it (no GradOpMaker for `pylayer_grad`): for a transpiled
  PyLayer the runtime refuses it with a `PyLayerContractError` naming the class and the user's
  `paddle.grad` line, where the framework's own path raises "Neither operator pylayer_grad's
  GradOpMaker ...".
- **Exports and the programs executors run hold no pylayer op**: after autodiff (to_static
  training), for inference programs, in the executor's copy of a static program and in
  `jit.save`/`save_inference_model` exports, each pylayer op is replaced by its sub-block's ops
  and its saved-tensor pipe by the saved values (PIR: `pir/ops.py`; the 2.6.2 legacy IR:
  `legacy/inline.py`, with each `pylayer_grad` op replaced by its backward block's ops),
  control flow and nested pylayer ops included.
  So the predictor's passes see ordinary ops, and every case's export runs in the predictor's
  default CPU configuration (oneDNN on, no pass deleted; outputs within float32 rounding of
  eager's, rtol 1e-5), the quantizer cases included. Except, on 3.3.1, the two cases marked
  `PREDICTOR_ONEDNN_OFF` (`multi_outputs`, `real_varargs_kwonly`): paddle 3.3.1's oneDNN
  kernels give wrong outputs on the AVX2 CI machines for the same models written with built-in
  ops (`tests/e2e/test_predictor_onednn.py`, off by about 1.5), a framework bug no export can
  avoid; their predictor runs with oneDNN off. Consequences: an export's custom backward is not
  in the file. On PIR the runtime writes beside it (`PREFIX.p2s`) how each PyLayer call was
  made (the class by module and qualified name, the non-tensor arguments as JSON, where its
  inputs and outputs are among the inlined ops), and training the model loaded with
  `paddle.jit.load` builds each call again as a pylayer op with the class's own backward, in a
  fresh process too (`train_after_load`): the class's module must be importable there (else a
  `PyLayerContractError` names it), and a call with an argument JSON cannot carry (a lambda, a
  layer object) or an export without its `.p2s` file refuses training, naming the class;
  inference needs neither. The framework's own path fails there: its export keeps backward as an
  id into the saving process's registry. A 2.6.2 export is not built again: training it after
  `jit.load` raises `PyLayerContractError` naming the classes, and inference needs `.eval()`.
- **In-place APIs in forward/backward** (`paddle.scatter_(buf, idx, val)` with its result
  discarded, `x.add_()`, `clip_`, `zero_`, `paddle.assign(y, output=x)`, `x[mask] = 0`;
  `real_fused_head_ce_scatter`, `real_binary_ste_mask`): in a static graph the framework runs
  each such API out of place and leaves `x` as it was, so a later read of `x` is stale (the
  framework's own `to_static`: a loss of 0.0 on 3.3.1, uninitialised memory on 2.6.2). The
  runtime follows every in-place API called as `paddle.NAME_`, `paddle.nn.functional.NAME_`
  or `x.NAME_()` while a body is built, so later reads see the write as in eager
  (`inplace.py`). Refused while the graph is built, with a `PyLayerContractError` naming the
  class and the user's `file:line` (`tests/e2e/errors/`): an in-place API reached under another
  name (`from paddle import scatter_`: `inplace_unfollowed`), and a forward writing in place
  into an argument of `apply` or a parameter (`inplace_into_argument`), which eager makes
  visible to the caller and a static graph cannot. `x.fill_()` has no static form and stays
  the framework's AttributeError at the user's line.
- **Forward returns an input as it is, and the model writes it in place afterwards**
  (`tests/e2e/errors/aliased_inplace.py`: a residual passed through, then `h[0] = 0.0`): eager's
  output is then the input tensor itself (`kept is h`, its "inplace strategy"), so the write
  changes both; a static graph's output is a tensor of its own (the op's result, a copy once
  inlined), the framework's `to_static` too, so the results would differ silently. Refused
  before to_static trains or infers with the program and when it is exported, on both IRs, with a
  `PyLayerContractError` naming the class, its forward's line, the input and the writing op,
  and saying to return `x.clone()` (which makes eager copy too). Not checked in a pure static
  program, whose optimizer writes parameters in place after every op; there the static
  graph's copy stands.
- **Eager-only code in a body**: `isinstance(o, paddle.Tensor)` is True for the static values
  forward and backward get, as in eager (`real_noop_save_inputs`; paddle's own code still
  sees the real class); `x.numpy()` (dy2static silently deletes the call), `.item()`,
  `.tolist()` and reading the dygraph tracer (`framework._dygraph_tracer()._amp_level`, Paddle's
  `RecomputeFunction`) raise `PyLayerContractError` at the user's `file:line` saying what to do
  instead (`numpy_in_forward`, `tracer_amp_level`). An attribute static values lack, read by
  user code: `x._share_buffer_to(y)` runs as an assign of `x` into `y` (`real_share_buffer`), a
  method a library patched onto `paddle.Tensor` at import, written in Python over Tensor ops,
  runs bound to the static value (`real_patched_tensor_method`), and any other (an eager
  tensor's own, or a numpy array's: `x.numpy().tobytes()` in a helper forward calls, where
  dy2static has deleted the `.numpy()`) raises a `PyLayerContractError` (an AttributeError
  too) at the user's `file:line` with what to do (`numpy_bytes_in_helper`), where a bare
  AttributeError naming `pir.Value` or `Variable` was.
- **In-place writes and views**: an in-place API may read a view (2.6.2 refused any view
  among its arguments, "is a viewed Tensor in dygraph", though reading one gives eager's
  values: `paddle.scatter_(out, index, paddle.gather(x, index, axis=1).T)`,
  `real_scatter_transposed_view`); a write into a view, or into a tensor that has one,
  reaches the other tensor in eager and cannot in a static graph: refused on both versions
  with a `PyLayerContractError` at the user's `file:line` (`inplace_into_view`), where the
  framework raises a ValueError naming an internal variable.
- **SOT** (`to_static(full_graph=False)`, the default of a plain `@to_static`; the `sot` mode
  of the table): on releases whose `paddle.jit.marker` has `unified` (3.3.1), SOT records each
  PyLayer call as one call of its graph, the runtime building the `pylayer` op in SOT's
  program, so a model that breaks SOT's graph nowhere else is one subgraph; the framework's
  SOT, which cannot trace a PyLayer, breaks the graph at every call instead. A recompute
  PyLayer re-running a layer, whose forward reads the layer's parameters directly as well as
  through its arguments (`real_recompute_function`, `real_recompute_tied_weights`,
  `real_mix_recompute_block`, `real_checkpoint_nested_swiglu`), is recorded too, its re-run in
  backward differentiating over the parameters the op takes. A call is kept out of the graph,
  a clean break that SOT's break-reason report gives as `pylayer2static: ...`, when its forward
  reads a tensor that is no parameter (a buffer) directly rather than through its arguments,
  or when building it raises (the eager call then raises the
  user's own error). Paddle's own `recompute` and `recompute_sequential` are recorded the same
  way, as the runtime's recompute op (no break, the memory saving kept; a recomputed function
  holding a random op is a clean break, run eagerly with eager's random state), where the
  framework's SOT inlines the non-reentrant form (its saving lost) and breaks in the reentrant
  one. On 2.6.2, which has no marker, SOT breaks the graph cleanly at each PyLayer call and
  runs it eagerly, as before, and breaks in Paddle's eager recompute. Either way every case
  equals eager (`tests/e2e/test_sot_capture.py` counts the breaks and the eager calls of
  each). Also kept
  out of the graph, and run eagerly once per call as in eager: a call whose forward writes
  Python state (a counter, a list, a dict item, a class attribute: `decorator_forms` and
  `decorators` log their calls), sets `stop_gradient = False` on an input, or reads state that
  may change while SOT holds writes of the model's own code to objects from outside it that it
  has not made yet; SOT would otherwise run
  such a forward twice, or not at all, per call, or let it read the old value (section "Python
  state in forward and backward" below). paddle 2.6.2's SOT loses a gradient across a graph
  break inside one expression (`f(h) + f(h * 2) + f(h * 3)`, each `f` breaking the graph: the
  last term's gradient does not reach `h`), whatever breaks it, PyLayer or not; there every
  PyLayer call breaks the graph, so write such calls one a statement on 2.6.2.
"""

SECTION = "features"
RUN_TIME_SECTION = "run-time-errors"
DATA_DIR = os.path.join(REPO, "docs", "support-data")

RUN_TIME_HEADER = """## Errors while the program runs

When an op fails while a static program runs (a shape mismatch only the run sees, an index out
of range, `FLAGS_check_nan_inf` finding a NaN or Inf), the framework prints the Python call stack
kept on the op when it was built (PIR: `Operation.callstack`; the 2.6.2 Program IR: the
`op_callstack` attribute): in full for a static program ("In user code:"), and for a
`to_static` forward as the frames of the user's converted code ("In transformed code:"). An op
of a PyLayer's forward or backward was built by the runtime, from code dy2static converted into a
temporary file (and on PIR a backward is built after the framework maps those files back to the
user's source). So the runtime rewrites the call stack of every op a body builds, once the body is
built (`body.py` `body_rules`, `frames.py` `user_callstack`, through each IR's adapter): the
runtime's frames and paddle's between the `apply` call and the body go, the body's frames name
the user's own file and line, and the frame of forward or backward itself reads
`forward of PyLayer CLASS` / `backward of PyLayer CLASS`. Inlining keeps the rewritten stacks
(PIR moves the ops themselves; the legacy IR copies each op with its attributes), so the ops the
executor runs name the user's lines. Not covered: paddle 2.6.2 prints no op's call stack with a
`FLAGS_check_nan_inf` error, for built-in ops too (the op type and its output's name; under
`to_static` the framework's own Python frames besides).

Each cell: the error's type, then every frame of the case's file that the message names (line,
function), for the transpiled case and for its built-in twin (`CASE_twin.py`, the same mistake
written in a model of built-in ops, whose ops the framework builds itself); to_static runs the
model's forward and backward, static is a pure static program with `paddle.static.gradients`
(`tests/e2e/test_errors.py` checks the same).
"""


def _section_markers(name: str) -> Tuple[str, str]:
    return f"<!-- support-matrix {name} begin -->", f"<!-- support-matrix {name} end -->"


def _sections(text: str) -> Dict[str, str]:
    found = {}
    for m in re.finditer(r"<!-- support-matrix (\S+) begin -->\n(.*?)\n<!-- support-matrix \1 end -->", text, re.S):
        found[m.group(1)] = m.group(2)
    return found


def run_time_table(runs: List[Dict[str, Any]]) -> str:
    """The run-time errors section: each case and mode, what ours and the twin's name, per version."""
    runs = sorted(runs, key=lambda d: [int(x) for x in re.findall(r"\d+", d["version"])], reverse=True)
    head = "| case | mistake | mode |" + "".join(
        f" {d['version']} pylayer2static | {d['version']} built-in twin |" for d in runs)
    lines = [RUN_TIME_HEADER, head, "|---|---|---|" + "---|---|" * len(runs)]
    for case in RUN_TIME_CASES:
        covers = next((d["run_time_errors"][case]["covers"] for d in runs if case in d.get("run_time_errors", {})), "")
        for mode in RUN_TIME_MODES:
            cells = ""
            for d in runs:
                cell = d.get("run_time_errors", {}).get(case, {}).get(mode)
                cells += " {pylayer2static} | {twin} |".format(**cell) if cell else " — | — |"
            lines.append(f"| [`{case}`](../tests/e2e/errors/{case}.py) | {covers} | {mode} |{cells}")
    return "\n".join(lines)


GENERATED = (SECTION, RUN_TIME_SECTION)  # this tool's sections, first and in this order


def render(sections: Dict[str, str]) -> str:
    """The doc: the header, this tool's sections, then the sections other tools write (kept as
    they are)."""
    parts = [HEADER]
    for name in [n for n in GENERATED if n in sections] + [n for n in sections if n not in GENERATED]:
        begin, end = _section_markers(name)
        parts.append(f"{begin}\n{sections[name]}\n{end}\n")
    return "\n".join(parts)


def _load_runs(data_dir: str) -> Dict[str, Dict[str, Any]]:
    runs = {}
    if os.path.isdir(data_dir):
        for name in sorted(os.listdir(data_dir)):
            if name.endswith(".json"):
                with open(os.path.join(data_dir, name), encoding="utf-8") as f:
                    data = json.load(f)
                runs[data["version"]] = data
    return runs


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with docs/SUPPORT.md, write nothing")
    parser.add_argument("--bin", default=os.environ.get("P2S_BIN", os.path.join(REPO, "build", "pylayer2static")))
    parser.add_argument("--doc", default=DOC)
    parser.add_argument("--data", default=DATA_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--framework", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.framework:
        print_framework_cells(args.start)
        return 0
    if not os.access(args.bin, os.X_OK):
        print(f"support_matrix: pylayer2static binary not found at {args.bin} (run make, or --bin)", file=sys.stderr)
        return 2
    version = paddle.__version__
    fresh = run_data(args.bin)
    fresh_json = json.dumps(fresh, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    data_path = os.path.join(args.data, f"{version}.json")
    runs = _load_runs(args.data)
    old_json = json.dumps(runs[version], ensure_ascii=False, indent=1, sort_keys=True) + "\n" if version in runs else ""
    runs[version] = fresh
    old = open(args.doc, encoding="utf-8").read() if os.path.exists(args.doc) else ""
    sections = {n: t for n, t in _sections(old).items() if not re.fullmatch(r"[\d.]+", n)}
    sections[SECTION] = table(list(runs.values()))
    sections[RUN_TIME_SECTION] = run_time_table(list(runs.values()))
    doc = render(sections)
    if args.check:
        if old_json == fresh_json and doc == old:
            print(f"support_matrix: {args.doc} is up to date for paddlepaddle {version}")
            return 0
        diff = difflib.unified_diff(old.splitlines(), doc.splitlines(), args.doc, "fresh run", lineterm="")
        print("\n".join(diff) or f"{data_path} differs from the fresh run")
        print(f"support_matrix: {args.doc} is stale for paddlepaddle {version}; regenerate with "
              f"{sys.executable} {COMMAND}", file=sys.stderr)
        return 1
    _write(data_path, fresh_json)
    _write(args.doc, doc)
    print(f"support_matrix: wrote {data_path} and the table of {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
