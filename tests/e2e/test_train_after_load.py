"""Fine-tuning a `paddle.jit.save` export after `paddle.jit.load`, in a fresh process.

paddle 3.3.1 (PIR): an export holds each PyLayer call's forward ops inlined; the runtime
records each call beside it (`PREFIX.p2s`) and, when the loaded model is trained, builds
each call again as a pylayer op whose backward is the class's own (reload.py). So
training the loaded model for STEPS SGD steps gives the losses and parameters of training
the original model eagerly. A class the training process cannot import, and a call the
export could not record (a lambda argument), are refused loudly, naming the module or the
class; inference of such a model is unaffected.
paddle 2.6.2 (legacy IR): training a loaded export that holds inlined PyLayer ops is refused,
naming the classes (see test_a_legacy_export_refuses_training).
"""
import os
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import paddle
import pytest

import harness
from conftest import HERE

PATH = os.path.join(HERE, "special", "train_after_load.py")
TRAINER = os.path.join(HERE, "load_and_train.py")
MODULE = "p2s_train_after_load"  # the transpiled copy's module name, in both processes


@pytest.fixture(scope="module")
def modules(transpile, tmp_path_factory) -> Tuple[Any, Any, str]:
    """The original module, the transpiled one (importable as MODULE from its directory)
    and that directory."""
    import_dir = str(tmp_path_factory.mktemp("importable"))
    copy = os.path.join(import_dir, f"{MODULE}.py")
    shutil.copy(transpile(PATH), copy)
    original = harness.load_module(PATH, "e2e_special_train_after_load")
    return original, harness.load_module(copy, MODULE), import_dir


def _save(module: Any, name: str, state: Dict[str, np.ndarray], prefix: str) -> Any:
    model = getattr(module, name)()
    model.set_state_dict(state)
    paddle.jit.save(model, prefix, input_spec=[paddle.static.InputSpec([-1, 6], "float32", "x")])
    return model


def _state(module: Any, name: str) -> Dict[str, np.ndarray]:
    paddle.seed(0)
    return {k: v.numpy() for k, v in getattr(module, name)().state_dict().items()}


def _train_in_fresh_process(prefix: str, import_dir: Optional[str]) -> Tuple[subprocess.CompletedProcess, str]:
    out = prefix + ".trained.npz"
    command = [sys.executable, TRAINER, prefix, out] + ([import_dir] if import_dir else [])
    return subprocess.run(command, capture_output=True, text=True, timeout=600), out


@pytest.mark.parametrize("name", ("QuantLinear", "GatedAct"))
def test_training_after_load_equals_training_the_original(modules, tmp_path, name: str) -> None:
    original, transpiled, import_dir = modules
    state = _state(original, name)
    reference = getattr(original, name)()
    reference.set_state_dict(state)
    want = original.train(reference, original.batches())
    assert len(set(want)) == original.STEPS  # the model learns: a stale step would show
    prefix = str(tmp_path / "model")
    saved = _save(transpiled, name, state, prefix)
    proc, out = _train_in_fresh_process(prefix, import_dir)
    if not harness.PIR:
        assert proc.returncode != 0 and re.search(rf"PyLayer \S*{MODULE}\.\w+ .*cannot be trained", proc.stderr), proc.stderr
        return
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = np.load(out)
    np.testing.assert_allclose(got["losses"], want, rtol=1e-5, atol=1e-6)
    trained = reference.state_dict()
    for structured, tensor in saved.state_dict().items():
        # Each parameter moved (the quantized weight only through the straight-through
        # estimator: round's own gradient is zero) and as it did in eager.
        assert not np.allclose(trained[structured].numpy(), state[structured]), structured
        np.testing.assert_allclose(got[f"param:{tensor.name}"], trained[structured].numpy(), rtol=1e-5, atol=1e-6)


def test_a_class_that_cannot_be_imported_is_named(modules, tmp_path) -> None:
    original, transpiled, _ = modules
    prefix = str(tmp_path / "model")
    _save(transpiled, "QuantLinear", _state(original, "QuantLinear"), prefix)
    proc, _ = _train_in_fresh_process(prefix, None)
    assert proc.returncode != 0
    if harness.PIR:
        assert re.search(rf"PyLayer FakeQuantSTE's custom backward again, from module '{MODULE}', "
                         rf"and importing '{MODULE}' failed", proc.stderr), proc.stderr[-4000:]
    else:
        assert re.search(rf"PyLayer \S*{MODULE}\.FakeQuantSTE .*cannot be trained", proc.stderr), proc.stderr[-4000:]


def test_an_unrecorded_call_refuses_training_and_still_infers(modules, tmp_path) -> None:
    original, transpiled, import_dir = modules
    prefix = str(tmp_path / "model")
    model = _save(transpiled, "LambdaAct", _state(original, "LambdaAct"), prefix)
    x = paddle.to_tensor(original.batches(1)[0][0])
    loaded = paddle.jit.load(prefix)
    loaded.eval()
    model.eval()
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    proc, _ = _train_in_fresh_process(prefix, import_dir)
    assert proc.returncode != 0
    refusal = (rf"could not record a call of PyLayer {MODULE}\.Shaped when it was saved \(an argument "
               r"of the call is function .*<lambda>" if harness.PIR else rf"PyLayer \S*{MODULE}\.Shaped .*cannot be trained")
    assert re.search(refusal, proc.stderr), proc.stderr[-4000:]
