"""`pylayer2static run` end to end: a project whose PyLayer is defined in one module and applied
from another, run without a copy tree through `python -m pylayer2static_runtime.run` (and
`python -m pylayer2static run`, and `install_import_hook()` in-process), trained under
`paddle.jit.to_static(full_graph=True)` against eager; the cache (reused, invalidated, safe
under concurrent processes), tracebacks into the user's file and transpile errors; the ranks of
`run -m paddle.distributed.launch` transpiled."""
import importlib
import inspect
import json
import os
import subprocess
import sys

import numpy as np
import paddle
import pytest

from pylayer2static_runtime import install_import_hook, project as project_rules
from pylayer2static_runtime.importhook import TranspileError

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BINARY = os.path.abspath(os.environ.get("P2S_BIN", os.path.join(REPO, "build", "pylayer2static")))
CACHE = "pylayer2static-0.1.0.py"

OPS = '''\
import paddle
from paddle.autograd import PyLayer


class ScaledTanh(PyLayer):
    @staticmethod
    def forward(ctx, x, scale=2.0):
        y = paddle.tanh(x) * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (ctx.scale - y * y / ctx.scale)
'''

MODEL = '''\
import paddle
from p2sproj.ops import ScaledTanh


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(ScaledTanh.apply(self.fc1(x), scale=1.5))


def check_positive(value):
    if value <= 0:
        raise ValueError("value must be positive")
    return value
'''
MODEL_RAISE_LINE = 17

BROKEN = '''\
import paddle
from paddle.autograd import PyLayer


class Scale(PyLayer):
    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0
'''

CLI = '''\
import json
import sys

import paddle
from p2sproj.ops import ScaledTanh

if __name__ == "__main__":
    y = ScaledTanh.apply(paddle.ones([2]))
    print(json.dumps({"argv": sys.argv[1:], "transpiled": "_p2s" in globals(), "sum": float(y.sum())}))
'''

# Trains the model eagerly and under to_static(full_graph=True) from the same initial state;
# counts the pylayer ops the runtime builds, so a run that bypassed the transpiled code fails.
TRAIN = '''\
import json
import sys

import numpy as np
import paddle

import pylayer2static_runtime
from p2sproj import model
from p2sproj.ops import ScaledTanh

builds = []
_build = pylayer2static_runtime.PyLayerOp.build


def counting_build(self, *args, **kwargs):
    builds.append(type(self).__name__)
    return _build(self, *args, **kwargs)


pylayer2static_runtime.PyLayerOp.build = counting_build


def train(to_static):
    paddle.seed(7)
    net = model.Net()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    step = paddle.jit.to_static(net, full_graph=True) if to_static else net
    x = paddle.to_tensor(np.random.RandomState(0).rand(16, 4).astype("float32"))
    losses = []
    for _ in range(4):
        loss = (step(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


eager = train(False)
static = train(True)
direct = float(ScaledTanh.apply(paddle.ones([2])).sum())
print(json.dumps({"argv": sys.argv, "eager": eager, "static": static, "builds": len(builds),
                  "direct": direct, "main_transpiled": "_p2s" in globals(),
                  "model_transpiled": hasattr(model, "_p2s")}))
'''

FAIL_MAIN = '''\
import paddle
from p2sproj.ops import ScaledTanh
from p2sproj import model

y = ScaledTanh.apply(paddle.ones([2]))
model.check_positive(-1.0)
'''
FAIL_MAIN_LINE = 6

# The first statement is compound, so the runtime import gets a line of its own (P2S090).
GUARDED = '''\
try:
    import paddle
except ImportError:
    raise
from p2sproj.ops import ScaledTanh


def run(x):
    y = ScaledTanh.apply(x)
    raise RuntimeError("guarded failure")
'''
GUARDED_RAISE_LINE = 10

GUARDED_MAIN = '''\
import paddle
import p2sproj.guarded

p2sproj.guarded.run(paddle.ones([2]))
'''

IMPORT_BROKEN = '''\
import json

try:
    import p2sproj.broken
except ImportError as e:
    print(json.dumps({"type": type(e).__name__, "message": str(e)}))
'''


def _project(root: str) -> str:
    os.makedirs(os.path.join(root, "p2sproj"))
    os.makedirs(os.path.join(root, "p2sns"))  # a namespace package
    files = {
        "pyproject.toml": '[project]\nname = "p2sproj"\nversion = "0"\n',
        "p2sproj/__init__.py": "",
        "p2sproj/ops.py": OPS,
        "p2sproj/model.py": MODEL,
        "p2sproj/broken.py": BROKEN,
        "p2sproj/cli.py": CLI,
        "p2sproj/guarded.py": GUARDED,
        "guarded_main.py": GUARDED_MAIN,
        "p2sns/act.py": "from p2sproj.ops import ScaledTanh\n\n\ndef act(x):\n    return ScaledTanh.apply(x)\n",
        "train.py": TRAIN,
        "fail_main.py": FAIL_MAIN,
        "import_broken.py": IMPORT_BROKEN,
    }
    for rel, text in files.items():
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    return root


@pytest.fixture
def project(tmp_path):
    if not os.access(BINARY, os.X_OK):
        pytest.fail(f"pylayer2static binary not found at {BINARY} (run make, or set P2S_BIN)")
    return _project(str(tmp_path / "proj"))


@pytest.fixture
def counting_bin(tmp_path):
    """A P2S_BIN that logs each call to the binary: (path, function giving the call count)."""
    log = tmp_path / "calls.log"
    wrapper = tmp_path / "bin" / "pylayer2static"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{BINARY}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper), lambda: len(log.read_text().splitlines()) if log.exists() else 0


def _env(binary: str, **extra) -> dict:
    env = dict(os.environ, P2S_BIN=binary, GLOG_minloglevel="2",
               PYTHONWARNINGS="ignore::UserWarning,ignore::DeprecationWarning")
    env.pop("PYTHONPATH", None)
    env.update(extra)
    return env


def _run(cwd: str, binary: str, *args: str, module: str = "pylayer2static_runtime.run", **env):
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=_env(binary, **env),
                          capture_output=True, text=True, timeout=300)


def _result(proc) -> dict:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _assert_trained(got: dict) -> None:
    assert got["model_transpiled"] and got["main_transpiled"]
    assert got["builds"] >= 1  # to_static went through the generated builder
    np.testing.assert_allclose(got["static"], got["eager"], rtol=1e-6, atol=1e-7)
    assert got["eager"][-1] < got["eager"][0]


def test_run_script_trains_static_equal_to_eager_and_reuses_the_cache(project, counting_bin):
    binary, calls = counting_bin
    got = _result(_run(project, binary, "train.py", "--lr", "0.1"))
    _assert_trained(got)
    assert got["argv"] == ["train.py", "--lr", "0.1"]
    assert calls() == 1  # one tree-mode run for the project
    cached = os.path.join(project, "p2sproj", "__pycache__", "model." + CACHE)
    with open(cached) as f:
        assert "_p2s.apply(ScaledTanh, self.fc1(x), scale=1.5)" in f.read()
    mtime = os.stat(cached).st_mtime_ns

    again = _result(_run(project, binary, "train.py", "--lr", "0.1"))
    assert calls() == 1  # every module came from the cache
    assert os.stat(cached).st_mtime_ns == mtime
    assert again["static"] == got["static"]


def test_run_cache_is_invalidated_when_a_source_changes(project, counting_bin):
    binary, calls = counting_bin
    before = _result(_run(project, binary, "train.py"))
    path = os.path.join(project, "p2sproj", "model.py")
    with open(path, "w") as f:
        f.write(MODEL.replace("scale=1.5", "scale=0.5"))
    after = _result(_run(project, binary, "train.py"))
    assert calls() == 2
    _assert_trained(after)
    assert after["eager"][0] != before["eager"][0]  # the edited model ran, not the cached one
    with open(os.path.join(project, "p2sproj", "__pycache__", "model." + CACHE)) as f:
        assert "scale=0.5" in f.read()


def test_run_module_and_python_m_pylayer2static_run(project, counting_bin):
    binary, _ = counting_bin
    got = _result(_run(project, binary, "-m", "p2sproj.cli", "a", "b"))
    assert got == {"argv": ["a", "b"], "transpiled": True, "sum": pytest.approx(2 * 2 * np.tanh(1.0))}
    via_package = _run(project, binary, "run", "-m", "p2sproj.cli", "c", module="pylayer2static",
                       PYTHONPATH=os.path.join(REPO, "packaging"))
    assert _result(via_package)["argv"] == ["c"]


def test_run_traceback_points_at_the_users_file_and_line(project, counting_bin):
    binary, _ = counting_bin
    proc = _run(project, binary, "fail_main.py")
    assert proc.returncode == 1
    model = os.path.join(project, "p2sproj", "model.py")
    main = os.path.join(project, "fail_main.py")
    assert f'File "{main}", line {FAIL_MAIN_LINE}, in <module>' in proc.stderr
    assert f'File "{model}", line {MODEL_RAISE_LINE}, in check_positive' in proc.stderr
    assert 'raise ValueError("value must be positive")' in proc.stderr
    assert proc.stderr.rstrip().endswith("ValueError: value must be positive")


def test_run_traceback_line_when_the_runtime_import_has_a_line_of_its_own(project, counting_bin):
    binary, _ = counting_bin
    proc = _run(project, binary, "guarded_main.py")
    assert proc.returncode == 1
    with open(os.path.join(project, "p2sproj", "__pycache__", "guarded." + CACHE)) as f:
        assert f.read().splitlines()[1] == "import pylayer2static_runtime as _p2s"  # after the key
    guarded = os.path.join(project, "p2sproj", "guarded.py")
    assert f'File "{guarded}", line {GUARDED_RAISE_LINE}, in run' in proc.stderr
    assert 'raise RuntimeError("guarded failure")' in proc.stderr


def test_run_transpile_error_is_an_import_error_with_file_line_col(project, counting_bin):
    binary, _ = counting_bin
    got = _result(_run(project, binary, "import_broken.py"))
    assert got["type"] == "TranspileError"
    broken = os.path.join(project, "p2sproj", "broken.py")
    assert f"{broken}:5:7: error[P2S101]: PyLayer 'Scale' has no 'forward'" in got["message"]
    assert not os.path.exists(os.path.join(project, "p2sproj", "__pycache__", "broken." + CACHE))


def test_run_configuration_error_is_an_import_error_with_file_line_col(project, counting_bin):
    binary, _ = counting_bin
    with open(os.path.join(project, "pyproject.toml"), "a") as f:
        f.write('[tool.pylayer2static]\njobs = "many"\n')
    with open(os.path.join(project, "import_broken.py"), "w") as f:
        f.write(IMPORT_BROKEN.replace("p2sproj.broken", "p2sproj.model"))
    got = _result(_run(project, binary, "import_broken.py"))
    assert got["type"] == "TranspileError"
    assert "exited 2" in got["message"]
    assert f"{os.path.join(project, 'pyproject.toml')}:5:8: error: expected a number of jobs" in got["message"]


def test_run_concurrent_processes_share_the_cache(project, counting_bin):
    binary, calls = counting_bin
    cmd = [sys.executable, "-m", "pylayer2static_runtime.run", "train.py"]
    procs = [subprocess.Popen(cmd, cwd=project, env=_env(binary), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        _assert_trained(json.loads(out.strip().splitlines()[-1]))
    pycache = os.path.join(project, "p2sproj", "__pycache__")
    assert sorted(os.listdir(pycache)) == ["model." + CACHE, "ops." + CACHE]  # no temp file left
    first = calls()
    _result(_run(project, binary, "train.py"))
    assert calls() == first  # what the two wrote is whole and valid


def test_run_transpiles_a_library_outside_the_project_only_when_named(project, counting_bin, tmp_path):
    binary, _ = counting_bin
    lib = tmp_path / "lib" / "p2slib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "layers.py").write_text(OPS + "\n\ndef double(x):\n    return ScaledTanh.apply(x)\n")
    with open(os.path.join(project, "use_lib.py"), "w") as f:
        f.write("import p2slib.layers\nprint(hasattr(p2slib.layers, '_p2s'))\n")
    libpath = str(tmp_path / "lib")
    plain = _run(project, binary, "use_lib.py", PYTHONPATH=libpath)
    named = _run(project, binary, "--package", "p2slib", "use_lib.py", PYTHONPATH=libpath)
    from_env = _run(project, binary, "use_lib.py", PYTHONPATH=libpath, P2S_PACKAGES="p2slib")
    assert [p.stdout.strip() for p in (plain, named, from_env)] == ["False", "True", "True"], \
        [p.stderr for p in (plain, named, from_env)]
    assert os.path.exists(lib / "__pycache__" / ("layers." + CACHE))


RECOMPUTE_LIB = '''\
import paddle
from paddle.distributed.fleet.utils import recompute


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.up = paddle.nn.Linear(4, 8)
        self.down = paddle.nn.Linear(8, 4)

    def forward(self, x):
        return x + self.down(paddle.nn.functional.gelu(self.up(x)))


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block() for _ in range(3)])

    def forward(self, x):
        for block in self.blocks:
            x = recompute(block, x)
        return x.mean()
'''

RECOMPUTE_MAIN = '''\
import json
import numpy as np
import paddle
import pylayer2static_runtime.builders as builders
import reclib

built = []
build_call = builders.build_call
def counting(cls, args, kwargs):
    built.append(cls.__name__)
    return build_call(cls, args, kwargs)
builders.build_call = counting

def train(static):
    paddle.seed(0)
    net = reclib.Net()
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    step = paddle.jit.to_static(net, full_graph=True) if static else net
    x = paddle.to_tensor(np.random.RandomState(0).randn(2, 4).astype("float32"), stop_gradient=False)
    losses = []
    for _ in range(3):
        loss = step(x)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses

print(json.dumps({"eager": train(False), "static": train(True), "built": built}))
'''


def test_run_library_calling_paddles_recompute_builds_the_runtimes_op(project, tmp_path):
    """A library that imports `recompute` from paddle, run through `run --package LIB`: under
    to_static each call is the runtime's recompute op (recompute.py), trained equal to eager."""
    lib = tmp_path / "lib" / "reclib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(RECOMPUTE_LIB)
    with open(os.path.join(project, "train_reclib.py"), "w") as f:
        f.write(RECOMPUTE_MAIN)
    got = _result(_run(project, BINARY, "--package", "reclib", "train_reclib.py", PYTHONPATH=str(tmp_path / "lib")))
    assert got["built"] == ["StaticRecompute"] * 3
    np.testing.assert_allclose(got["static"], got["eager"], rtol=1e-6, atol=1e-7)


LAUNCH_MAIN = '''\
import json
import os
import sys

import p2slib.layers
from p2sproj.ops import ScaledTanh


def act(x):
    return ScaledTanh.apply(x)


rank = os.environ["PADDLE_TRAINER_ID"]
with open(os.path.join(sys.argv[1], f"rank{rank}.json"), "w") as f:
    json.dump({"argv": sys.argv[2:], "main_transpiled": "_p2s" in globals(),
               "library_transpiled": hasattr(p2slib.layers, "_p2s"), "path0": sys.path[0]}, f)
'''


def _launch_ranks(project: str, tmp_path, command: list, **env) -> list:
    """`command` (a launch of launch_main.py with 2 ranks) run in `project`, `p2slib` on the
    path; what each rank wrote."""
    lib = tmp_path / "lib" / "p2slib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "layers.py").write_text(OPS + "\n\ndef double(x):\n    return ScaledTanh.apply(x)\n")
    with open(os.path.join(project, "launch_main.py"), "w") as f:
        f.write(LAUNCH_MAIN)
    out = tmp_path / "ranks"
    out.mkdir()
    logs = str(tmp_path / "logs")
    command = [arg.format(logs=logs, out=out) for arg in command]
    proc = subprocess.run(command, cwd=project, env=_env(BINARY, PYTHONPATH=str(tmp_path / "lib"), **env),
                          capture_output=True, text=True, timeout=300)
    worker_log = os.path.join(logs, "workerlog.0")
    assert proc.returncode == 0, proc.stderr[-3000:] + (open(worker_log).read()[-3000:] if os.path.exists(worker_log) else "")
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(2)]


LAUNCH_OPTIONS = ["--nproc_per_node", "2", "--log_dir", "{logs}"]


def test_run_paddle_distributed_launch_runs_the_ranks_transpiled(project, tmp_path):
    """`run --package LIB -m paddle.distributed.launch ... launch_main.py ARGS`: the launcher's
    ranks (its own processes) run the script through the runner, the script and the named
    library transpiled, the script's arguments and sys.path[0] as `python launch_main.py` gives
    them. The hook used to live in the launcher alone, the ranks untranspiled."""
    ranks = _launch_ranks(project, tmp_path, [sys.executable, "-m", "pylayer2static_runtime.run", "--package", "p2slib",
                                              "-m", "paddle.distributed.launch", *LAUNCH_OPTIONS,
                                              "launch_main.py", "{out}", "a", "--lr", "0.1"])
    assert ranks == [{"argv": ["a", "--lr", "0.1"], "main_transpiled": True, "library_transpiled": True,
                      "path0": os.path.realpath(project)}] * 2


def test_run_as_the_launchers_program_runs_the_ranks_transpiled(project, tmp_path):
    """The other form that works, and what the refusal below names: the launcher (plain
    python) starting `pylayer2static run --package LIB launch_main.py` as each rank's program."""
    ranks = _launch_ranks(project, tmp_path, [sys.executable, "-m", "paddle.distributed.launch", *LAUNCH_OPTIONS,
                                              BINARY, "run", "--package", "p2slib", "launch_main.py", "{out}"],
                          P2S_PYTHON=sys.executable)
    assert [(r["main_transpiled"], r["library_transpiled"]) for r in ranks] == [(True, True)] * 2


def test_run_launch_command_line_gets_the_runner_before_the_training_script():
    """The launcher's own parser finds the script: an option's value ending in .py, `--opt=value`
    and the script's name again among its arguments leave the rewrite where it belongs."""
    from pylayer2static_runtime.run import RANK_ENTRY, _ranks_through_the_runner

    launch = ["--log_dir", "logs.py", "--nproc_per_node=2", "train.py", "--out", "train.py"]
    assert _ranks_through_the_runner(launch, ["a", "b"]) == [
        "--log_dir", "logs.py", "--nproc_per_node=2", RANK_ENTRY, "--package", "a", "--package", "b",
        "train.py", "--out", "train.py"]
    already = ["--nproc_per_node", "2", "/usr/bin/pylayer2static", "run", "train.py"]
    assert _ranks_through_the_runner(already, []) == already


@pytest.mark.parametrize("launch", [["-m", "paddle.distributed.launch", "--nproc_per_node", "2", "/bin/true"],
                                    ["-m", "paddle.distributed.fleet.launch", "--nproc_per_node", "2", "train.py"]])
def test_run_launch_whose_ranks_it_cannot_reach_is_refused(project, launch):
    """A launch whose ranks would run untranspiled (a training program that is not a .py file,
    the legacy launcher) is exit 2 before anything starts, naming the forms that work."""
    proc = _run(project, BINARY, *launch)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert f"pylayer2static run: error: -m {launch[1]}: " in proc.stderr
    assert "-m\npaddle.distributed.launch [OPTIONS] train.py [ARGS]" in proc.stderr
    assert "$(command -v pylayer2static) run [--package NAME]" in proc.stderr


@pytest.mark.parametrize("name", ["paddle", "paddle.distributed.fleet", "pylayer2static_runtime", "pylayer2static"])
def test_run_package_never_transpiled_is_an_error_before_the_program_runs(project, name):
    """`run --package paddle...` was accepted and transpiled nothing (the hook never transpiles
    the framework or this tool): now exit 2 and why, through the binary's `run`."""
    proc = subprocess.run([BINARY, "run", "--package", name, "train.py"], cwd=project,
                          env=_env(BINARY, P2S_PYTHON=sys.executable), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""  # the program did not run
    assert f"pylayer2static run: error: --package {name}: " in proc.stderr
    assert "not transpiled" in proc.stderr
    if name.startswith("paddle"):
        assert "Paddle's own PyLayer classes are built as static ops by the runtime when they are called" in proc.stderr
        assert 'docs/DESIGN.md, "Paddle\'s own PyLayers"' in proc.stderr
    assert not os.path.exists(os.path.join(project, "p2sproj", "__pycache__"))


def test_run_configured_or_environment_package_never_transpiled_is_an_error(project):
    from_env = _run(project, BINARY, "train.py", P2S_PACKAGES="p2slib,paddle")
    assert from_env.returncode == 2 and from_env.stdout == ""
    assert "pylayer2static run: error: $P2S_PACKAGES names paddle: the framework's own modules" in from_env.stderr
    pyproject = os.path.join(project, "pyproject.toml")
    with open(pyproject, "a") as f:
        f.write('[tool.pylayer2static]\npackages = ["paddle.distributed"]\n')
    configured = _run(project, BINARY, "-m", "p2sproj.cli")
    assert configured.returncode == 2 and configured.stdout == ""
    assert f"packages in {os.path.realpath(pyproject)} names paddle.distributed: " in configured.stderr


# (the table's lines, what the hook reads of `packages`: a list, or the error it raises)
CONFIG_CASES = [
    ('packages = ["a", "b"]\n', ["a", "b"]),
    ("packages = [\n  'a',  # a comment\n  \"b\\t\",\n]\nselect = 'P2S1'\npackages = [\"c\"]\n", ["a", "b\t", "c"]),
    ('packages = "a"\n', "2:12: error: expected an array of strings"),
    ('packages = ["a", 3]\n', "2:18: error: expected a string"),
    ('packages = ["a\\x"]\n', "2:16: error: unsupported escape in string"),
    # the binary reads no further than its first error, and reports it when it transpiles
    ('jobs = "many"\npackages = ["a"]\n', []),
    ('packages = ["a"]\nbogus = 1\npackages = ["b"]\n', ["a"]),
]


def test_configured_packages_are_read_as_the_binary_reads_the_table(tmp_path):
    """The hook reads `packages` by the binary's rule (src/config.c): the same file, the same
    values, the same `file:line:col` error where the binary stops at `packages`."""
    (tmp_path / "m.py").write_text("x = 1\n")
    other = '[tool.other]\nx = [\n  "[tool.pylayer2static]",  # not ours\n]\n'
    pyproject = tmp_path / "pyproject.toml"
    for table, want in CONFIG_CASES + [(other + "[tool.pylayer2static]\npackages = ['z']\n", ["z"])]:
        text = table if table.startswith("[") else "[tool.pylayer2static]\n" + table
        pyproject.write_text(text)
        binary = subprocess.run([BINARY, "--lint", "m.py"], cwd=tmp_path, capture_output=True, text=True)
        if isinstance(want, list):
            assert project_rules.configured_packages(str(tmp_path)) == want, text
            continue
        message = f"{os.path.realpath(pyproject)}:{want}"
        assert binary.returncode == 2 and binary.stderr.startswith(message), (text, binary.stderr)
        with pytest.raises(ImportError) as raised:
            project_rules.configured_packages(str(tmp_path))
        assert str(raised.value) == message, text


def test_project_root_is_the_binarys(tmp_path):
    """The project is the configuration's directory, else the nearest pyproject.toml's (the
    binary's project.c); without one, where the search started."""
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner" / "pkg"
    inner.mkdir(parents=True)
    (outer / "pyproject.toml").write_text("[tool.pylayer2static]\n")
    (outer / "inner" / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    assert project_rules.project_root(str(inner)) == str(outer.resolve())
    (outer / "pyproject.toml").write_text('[project]\nname = "outer"\n')
    assert project_rules.project_root(str(inner)) == str((outer / "inner").resolve())
    bare = tmp_path / "bare" / "sub"
    bare.mkdir(parents=True)
    (tmp_path / "bare" / "setup.py").write_text("")
    assert project_rules.project_root(str(bare)) == str(bare.resolve())


def test_install_import_hook_in_process(project):
    hook = install_import_hook(project=project, binary=BINARY)
    sys.path.insert(0, project)
    try:
        model = importlib.import_module("p2sproj.model")
        assert model.__file__ == os.path.join(project, "p2sproj", "model.py")
        assert "_p2s.apply(ScaledTanh, self.fc1(x), scale=1.5)" in inspect.getsource(model.Net.forward)
        assert "_p2s.apply(ScaledTanh, x)" in inspect.getsource(importlib.import_module("p2sns.act"))
        with pytest.raises(TranspileError, match=r"broken\.py:5:7: error\[P2S101\]"):
            importlib.import_module("p2sproj.broken")
        paddle.seed(3)
        net = model.Net()
        x = paddle.to_tensor(np.random.RandomState(1).rand(3, 4).astype("float32"))
        eager = net(x)
        eager.sum().backward()
        eager_grad = net.fc1.weight.grad.numpy()
        net.clear_gradients()
        static = paddle.jit.to_static(net, full_graph=True)(x)
        static.sum().backward()
        np.testing.assert_allclose(static.numpy(), eager.numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(net.fc1.weight.grad.numpy(), eager_grad, rtol=1e-6, atol=1e-7)
    finally:
        hook.uninstall()
        sys.path.remove(project)
        for name in [n for n in sys.modules if n.split(".")[0] in ("p2sproj", "p2sns")]:
            del sys.modules[name]
