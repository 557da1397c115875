"""PaddleNLP's fused LM head + cross-entropy made static through `pylayer2static run`.

The library file is the real one, from the pinned paddlenlp 3.0.0b4 wheel
(tests/fetch_paddlenlp.sh, sha256-checked; 2.8.1 has no such class):
`paddlenlp/transformers/tensor_parallel_utils.py`, whose `fused_head_and_loss_fn` applies
`FusedHeadAndCrossEntropy`. It is installed with empty package `__init__`s, as
test_run_paddlenlp.py installs the quick LoRA layers, and `paddlenlp/utils/tools.py` holds only
the wheel's own `get_env_device` (the module it imports it from needs requests, PIL, tqdm and
colorlog). Tensor parallel degree 1, 8 tokens in chunks of 3, a bias, int64 labels; with and
without a loss mask, `return_token_loss` both ways. The class computes every gradient in
forward (grad mode off in eager: it reads `stop_gradient` of a tensor it made to decide to
compute the hidden states' one) and scales them in backward; or, returning token losses, it
computes them in backward. The user's model trains under `to_static(full_graph=True)` and as a
static program equal to eager (loss, the hidden states' and every parameter's gradient), and
its `jit.save` export, inlined, gives eager's loss.
"""
import json
import os
import signal
import subprocess
import sys
import zipfile
from typing import Any, Dict, List

import numpy as np
import pytest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BINARY = os.path.abspath(os.environ.get("P2S_BIN", os.path.join(REPO, "build", "pylayer2static")))
MODULE = "paddlenlp/transformers/tensor_parallel_utils.py"
TOOLS = "paddlenlp/utils/tools.py"
SUPPORT_ROW = ("PaddleNLP's fused LM head + cross-entropy, the real class from the pinned 3.0.0b4 wheel "
               "(`FusedHeadAndCrossEntropy`, tensor parallel degree 1) through `pylayer2static run --package "
               "paddlenlp`: it computes every gradient in forward under `no_grad`, deciding by the "
               "`stop_gradient` of a tensor it made, fills buffers with `scatter_` in a loop and `+=`; "
               "loss mask on and off, `return_token_loss` both ways.")

TRAIN = '''\
import json, os, sys
import numpy as np
import paddle
from paddlenlp.transformers import tensor_parallel_utils
from paddlenlp.transformers.tensor_parallel_utils import fused_head_and_loss_fn

VOCAB, HIDDEN, CHUNK = 10, 6, 3


class Criterion(paddle.nn.Layer):
    """A causal LM's last projection and its fused loss (LlamaPretrainingCriterion's call)."""

    def __init__(self, masked, token_loss):
        super().__init__()
        self.masked, self.token_loss = masked, token_loss
        self.proj = paddle.nn.Linear(HIDDEN, HIDDEN)
        self.lm_head_weight = self.create_parameter([HIDDEN, VOCAB])
        self.lm_head_bias = self.create_parameter([VOCAB], is_bias=True)

    def forward(self, x, labels, mask):
        hidden = paddle.tanh(self.proj(x))
        if not self.masked:  # the mask as ignore_index labels (the class's own mask then)
            labels = paddle.where(mask > 0, labels, paddle.full_like(labels, -100))
        loss = fused_head_and_loss_fn(hidden, self.lm_head_weight, self.lm_head_bias, labels,
                                      mask if self.masked else None, False, VOCAB, 1, True, False,
                                      CHUNK, self.token_loss, -100)
        return (loss * paddle.arange(1, 9, dtype="float32").reshape([2, 4])).sum() if self.token_loss else loss


rng = np.random.RandomState(0)
X = rng.standard_normal([2, 4, HIDDEN]).astype("float32")
LABELS = rng.randint(0, VOCAB, [2, 4]).astype("int64")
LABELS[1, 3] = -100
MASK = (rng.rand(2, 4) > 0.3).astype("float32")


def make(masked, token_loss):
    paddle.seed(7)
    return Criterion(masked, token_loss)


def grads(net, x):
    out = {"x": None if x.grad is None else x.grad.numpy().tolist()}
    for name, p in net.named_parameters():
        out[name] = None if p.grad is None else p.grad.numpy().tolist()
    return out


def dynamic(masked, token_loss, wrap):
    net = make(masked, token_loss)
    step = wrap(net)
    x = paddle.to_tensor(X, stop_gradient=False)
    loss = step(x, paddle.to_tensor(LABELS), paddle.to_tensor(MASK))
    loss.backward()
    got = {"loss": float(loss), **grads(net, x)}
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    losses = []
    for _ in range(3):
        opt.step()
        opt.clear_grad(set_to_zero=False)
        loss = step(paddle.to_tensor(X), paddle.to_tensor(LABELS), paddle.to_tensor(MASK))
        loss.backward()
        losses.append(float(loss))
    got["train"] = losses
    return got, net


def static_program(masked, token_loss, state):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            net = make(masked, token_loss)
            x = paddle.static.data("x", [2, 4, HIDDEN], "float32")
            x.stop_gradient = False
            labels = paddle.static.data("labels", [2, 4], "int64")
            mask = paddle.static.data("mask", [2, 4], "float32")
            loss = net(x, labels, mask)
            params = [p for _, p in net.named_parameters()]
            names = [name for name, _ in net.named_parameters()]
            gs = paddle.static.gradients([loss], [x] + params)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        for (name, p) in net.named_parameters():
            paddle.static.global_scope().find_var(p.name).get_tensor().set(state[name], paddle.CPUPlace())
        fetched = exe.run(main, feed={"x": X, "labels": LABELS, "mask": MASK}, fetch_list=[loss] + gs)
    finally:
        paddle.disable_static()
    got = {"loss": float(np.asarray(fetched[0]))}
    for name, g in zip(["x"] + names, fetched[1:]):
        got[name] = np.asarray(g).tolist()
    return got


def attempt(fn):
    """fn's result, or {"error": the exception's last line} (the framework's own path fails)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - each mode's failure is a result
        return {"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"}


def export(masked, token_loss):
    exported = make(masked, token_loss)
    exported.eval()
    prefix = os.path.join(sys.argv[1], f"fused_head_{int(masked)}{int(token_loss)}")
    paddle.jit.save(exported, prefix, input_spec=[
        paddle.static.InputSpec([2, 4, HIDDEN], "float32"), paddle.static.InputSpec([2, 4], "int64"),
        paddle.static.InputSpec([2, 4], "float32")])
    loaded = paddle.jit.load(prefix)
    inputs = [paddle.to_tensor(X), paddle.to_tensor(LABELS), paddle.to_tensor(MASK)]
    return {"prefix": prefix, "loaded": float(loaded(*inputs)), "expected": float(exported(*inputs))}


results = {"library_transpiled": hasattr(tensor_parallel_utils, "_p2s"), "runs": []}
for masked in (True, False):
    for token_loss in (False, True):
        eager, net = dynamic(masked, token_loss, lambda m: m)
        state = {name: p.numpy() for name, p in make(masked, token_loss).named_parameters()}
        results["runs"].append({
            "masked": masked, "token_loss": token_loss, "eager": eager,
            "to_static": attempt(lambda: dynamic(masked, token_loss,
                                                 lambda m: paddle.jit.to_static(m, full_graph=True))[0]),
            "static": attempt(lambda: static_program(masked, token_loss, state)),
            "jit_save": attempt(lambda: export(masked, token_loss)),
        })
print(json.dumps(results))
'''


def install(site: str) -> None:
    """Make `site` a site directory holding the wheel's tensor_parallel_utils.py as
    `paddlenlp.transformers`, and its get_env_device as `paddlenlp.utils.tools`."""
    proc = subprocess.run(["sh", os.path.join(REPO, "tests", "fetch_paddlenlp.sh"),
                           os.path.join(REPO, "build", "downloads"), "3.0.0b4"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the pinned paddlenlp wheel cannot be had: {proc.stderr}")
    with zipfile.ZipFile(proc.stdout.strip()) as wheel:
        source = wheel.read(MODULE)
        tools = wheel.read(TOOLS).decode()
    for package in ("paddlenlp", "paddlenlp/transformers", "paddlenlp/utils"):
        os.makedirs(os.path.join(site, package), exist_ok=True)
        with open(os.path.join(site, package, "__init__.py"), "w") as f:
            f.write("")
    with open(os.path.join(site, MODULE), "wb") as f:
        f.write(source)
    start = tools.index("def get_env_device():")
    end = tools.index("\ndef ", start + 1)
    with open(os.path.join(site, TOOLS), "w") as f:
        f.write("import paddle\n\n\n" + tools[start:end].rstrip() + "\n")


def train(site: str, work: str, transpiled: bool, binary: str = BINARY) -> Dict[str, Any]:
    """The user's script run in `work`: through `pylayer2static run --package paddlenlp` when
    `transpiled`, else as it is (the framework's own PyLayer path); its results, or
    {"error": why it produced none}."""
    project = os.path.join(work, "proj")
    os.makedirs(project, exist_ok=True)
    with open(os.path.join(project, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "fused-head-user"\n')
    with open(os.path.join(project, "train.py"), "w") as f:
        f.write(TRAIN)
    path = os.pathsep.join([site] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    env = dict(os.environ, P2S_BIN=binary, PYTHONPATH=path, GLOG_minloglevel="2",
               PYTHONWARNINGS="ignore::UserWarning,ignore::DeprecationWarning")
    command = ["-m", "pylayer2static_runtime.run", "--package", "paddlenlp", "train.py"] if transpiled else ["train.py"]
    proc = subprocess.run([sys.executable, *command, work], cwd=project, env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        if proc.returncode < 0:
            return {"error": f"the process died by {signal.Signals(-proc.returncode).name}"}
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        return {"error": lines[-1] if lines else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


MODES = ("to_static", "static", "jit_save")


def differences(got: Dict[str, Any]) -> Dict[str, List[str]]:
    """For each mode, how its results differ from eager's in any of the four configurations
    (loss mask on and off, `return_token_loss` both ways): empty lists when all are equal
    (loss, the hidden states' and every parameter's gradient, 3 SGD steps under to_static; the
    export's loss, with no pylayer op left in it)."""
    if "error" in got:
        return {mode: [got["error"]] for mode in MODES}
    found: Dict[str, List[str]] = {mode: [] for mode in MODES}
    for run in got["runs"]:
        label = f"loss mask {run['masked']}, return_token_loss {run['token_loss']}"
        eager = run["eager"]
        for mode in ("to_static", "static"):
            result = run[mode]
            if "error" in result:
                found[mode].append(result["error"])
                continue
            for key in [k for k in eager if k != "train"] + (["train"] if mode == "to_static" else []):
                if result[key] is None or eager[key] is None:
                    if (result[key] is None) != (eager[key] is None):
                        found[mode].append(f"{label}: {'no' if result[key] is None else 'a'} gradient of {key}")
                elif not np.allclose(result[key], eager[key], rtol=1e-5, atol=1e-6):
                    found[mode].append(f"{label}: wrong {'gradient of ' + key if key not in ('loss', 'train') else key}")
        saved = run["jit_save"]
        if "error" in saved:
            found["jit_save"].append(saved["error"])
        elif not np.allclose(saved["loaded"], saved["expected"], rtol=1e-5, atol=1e-6):
            found["jit_save"].append(f"{label}: wrong loss")
        elif harness.saved_pylayer_ops(saved["prefix"]) != 0:
            found["jit_save"].append(f"{label}: the export holds a pylayer op")
    return found


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> str:
    site = str(tmp_path_factory.mktemp("site"))
    try:
        install(site)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    return site


def test_run_makes_paddlenlp_fused_head_static(library, tmp_path) -> None:
    got = train(library, str(tmp_path), transpiled=True)
    assert "error" not in got, got.get("error")
    assert got["library_transpiled"]
    assert len(got["runs"]) == 4
    for run in got["runs"]:
        eager = run["eager"]
        assert eager["x"] is not None and eager["train"][-1] < eager["loss"], run
    assert differences(got) == {mode: [] for mode in MODES}
