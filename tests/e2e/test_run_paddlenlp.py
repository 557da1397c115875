"""A library's PyLayer made static through `pylayer2static run`: PaddleNLP's quick LoRA.

The user's model is a LoRA linear in the style of PaddleNLP's `LoRALinear(use_quick_lora=True)`
calling the library's `quick_lora`, whose `QuickLora.apply` lives in the installed package.
`run --package paddlenlp` transpiles the library module on import; the model then trains under
`paddle.jit.to_static(full_graph=True)` equal to eager (custom backward included: the frozen
weight and bias get no gradient, the LoRA matrices the library's) and exports with `jit.save`.

The library file is the real one, from the pinned paddlenlp 2.8.1 wheel
(tests/fetch_paddlenlp.sh, sha256-checked): `paddlenlp/peft/lora/lora_quick_layers.py`, which
imports only paddle. It is installed with empty package `__init__`s: the whole package imports
its transformers stack, some 1 GB of dependencies whose current releases no longer import with
2.8.1 (huggingface_hub 2.4.0 has no `repo_type_and_id_from_hf_id`).
"""
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BINARY = os.path.abspath(os.environ.get("P2S_BIN", os.path.join(REPO, "build", "pylayer2static")))
MODULE = "paddlenlp/peft/lora/lora_quick_layers.py"

TRAIN = '''\
import json, os, sys
import numpy as np
import paddle
from paddlenlp.peft.lora import lora_quick_layers
from paddlenlp.peft.lora.lora_quick_layers import quick_lora


class QuickLoRALinear(paddle.nn.Linear):
    """PaddleNLP's LoRALinear with use_quick_lora=True, reduced to its training path."""

    def __init__(self, in_features, out_features, r=4, lora_alpha=8.0):
        super().__init__(in_features, out_features)
        self.weight.stop_gradient = True
        self.bias.stop_gradient = True
        self.lora_A = self.create_parameter([in_features, r])
        self.lora_B = self.create_parameter([r, out_features])
        self.scaling = lora_alpha / r

    def forward(self, x):
        return quick_lora(x, self.lora_A, self.lora_B, self.weight, self.bias, self.scaling)


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.q = QuickLoRALinear(8, 8)
        self.out = QuickLoRALinear(8, 4, r=2, lora_alpha=4.0)

    def forward(self, x):
        return self.out(paddle.nn.functional.gelu(self.q(x)))


def train(wrap):
    paddle.seed(7)
    net = Net()
    step = wrap(net)
    opt = paddle.optimizer.SGD(0.05, parameters=net.parameters())
    x = paddle.to_tensor(np.random.RandomState(0).standard_normal([2, 3, 8]).astype("float32"))
    losses = []
    for _ in range(5):
        loss = step(x).square().mean()
        loss.backward()
        opt.step()
        opt.clear_grad(set_to_zero=False)
        losses.append(float(loss))
    frozen = [p.grad is None for p in (net.q.weight, net.q.bias, net.out.weight, net.out.bias)]
    return net, x, losses, frozen


_, _, eager, eager_frozen = train(lambda m: m)
net, x, static, static_frozen = train(lambda m: paddle.jit.to_static(m, full_graph=True))
net.eval()
prefix = os.path.join(sys.argv[1], "quick_lora")
paddle.jit.save(net, prefix, input_spec=[paddle.static.InputSpec([None, 3, 8], "float32")])
loaded = paddle.jit.load(prefix)
print(json.dumps({
    "library_transpiled": hasattr(lora_quick_layers, "_p2s"),
    "eager": eager, "static": static, "eager_frozen": eager_frozen, "static_frozen": static_frozen,
    "loaded": loaded(x).numpy().tolist(), "expected": net(x).numpy().tolist(),
}))
'''


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> str:
    """A site directory holding the wheel's lora_quick_layers.py as `paddlenlp.peft.lora`."""
    proc = subprocess.run(["sh", os.path.join(REPO, "tests", "fetch_paddlenlp.sh"),
                           os.path.join(REPO, "build", "downloads")], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"the pinned paddlenlp wheel cannot be had: {proc.stderr}")
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(proc.stdout.strip()) as wheel:
        source = wheel.read(MODULE)
    package = site / os.path.dirname(MODULE)
    package.mkdir(parents=True)
    for part in (site / "paddlenlp", site / "paddlenlp" / "peft", package):
        (part / "__init__.py").write_text("")
    (package / os.path.basename(MODULE)).write_bytes(source)
    return str(site)


def test_run_makes_paddlenlp_quick_lora_static(library, tmp_path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "lora-user"\n')
    (project / "train.py").write_text(TRAIN)
    env = dict(os.environ, P2S_BIN=BINARY, PYTHONPATH=library, GLOG_minloglevel="2",
               PYTHONWARNINGS="ignore::UserWarning,ignore::DeprecationWarning")
    proc = subprocess.run([sys.executable, "-m", "pylayer2static_runtime.run", "--package", "paddlenlp",
                           "train.py", str(tmp_path)], cwd=project, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["library_transpiled"]
    np.testing.assert_allclose(got["static"], got["eager"], rtol=1e-5, atol=1e-7)
    assert got["eager"][-1] < got["eager"][0]
    assert got["eager_frozen"] == got["static_frozen"] == [True] * 4
    np.testing.assert_allclose(got["loaded"], got["expected"], rtol=1e-5, atol=1e-6)
    assert harness.saved_pylayer_ops(str(tmp_path / "quick_lora")) == 0, "the export holds a pylayer op"
