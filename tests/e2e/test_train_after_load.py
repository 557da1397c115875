"""Fine-tuning a `paddle.jit.save` export after `paddle.jit.load`, in a fresh process.

paddle 3.3.1 (PIR): an export holds each PyLayer call's forward ops inlined; the runtime
records each call beside it (`PREFIX.p2s`) and, when the loaded model is trained, builds
each call again as a pylayer op whose backward is the class's own (reload.py). So
training the loaded model for STEPS SGD steps gives the losses and parameters of training
the original model eagerly. A class the training process cannot import, and a call the
export could not record (a lambda argument), are refused loudly, naming the module or the
class, and so is an export whose records file is gone; inference of such a model is
unaffected.
paddle 2.6.2 (legacy IR): the calls are not built again; training a loaded export that holds
inlined PyLayer ops is refused, naming the classes (legacy.py).
"""
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import paddle
import pytest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))

PATH = os.path.join(HERE, "special", "train_after_load.py")
TRAINER = os.path.join(HERE, "load_and_train.py")
MODULE = "p2s_train_after_load"  # the transpiled copy's module name, in both processes


class TrainingFailed(Exception):
    """The fresh process failed; the message is the end of its standard error."""


def importable_copy(path: str, import_dir: str) -> Any:
    """The transpiled file `path` imported as MODULE from `import_dir`, where a fresh process
    can import it too."""
    copy = os.path.join(import_dir, f"{MODULE}.py")
    shutil.copy(path, copy)
    return harness.load_module(copy, MODULE)


def initial_state(module: Any, name: str) -> Dict[str, np.ndarray]:
    paddle.seed(0)
    return {k: v.numpy() for k, v in getattr(module, name)().state_dict().items()}


def train_original(module: Any, name: str, state: Dict[str, np.ndarray]) -> Tuple[List[float], Dict[str, np.ndarray]]:
    """The losses of training `module.<name>` eagerly from `state`, and its parameters after."""
    model = getattr(module, name)()
    model.set_state_dict(state)
    losses = module.train(model, module.batches())
    return losses, {k: v.numpy() for k, v in model.state_dict().items()}


def save(module: Any, name: str, state: Dict[str, np.ndarray], prefix: str) -> Any:
    model = getattr(module, name)()
    model.set_state_dict(state)
    paddle.jit.save(model, prefix, input_spec=[paddle.static.InputSpec([-1, 6], "float32", "x")])
    return model


def train_after_load(module: Any, name: str, state: Dict[str, np.ndarray], directory: str,
                     import_dir: Optional[str] = None, runtime: bool = True,
                     records: bool = True) -> Tuple[List[float], Dict[str, np.ndarray]]:
    """Save `module.<name>` from `state` (and drop the calls' records unless `records`), then
    load and train it in a fresh process (with the runtime imported unless not `runtime`);
    its losses and parameters after, as `train_original` gives them. TrainingFailed if the
    process fails."""
    prefix = os.path.join(directory, name)
    saved = save(module, name, state, prefix)
    if not records and os.path.exists(prefix + ".p2s"):
        os.remove(prefix + ".p2s")
    out = prefix + ".trained.npz"
    command = [sys.executable, TRAINER] + ([] if runtime else ["--no-runtime"]) + [prefix, out]
    proc = subprocess.run(command + ([import_dir] if import_dir else []), capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise TrainingFailed(proc.stderr[-4000:])
    got = np.load(out)
    return list(got["losses"]), {k: got[f"param:{v.name}"] for k, v in saved.state_dict().items()}


def assert_trained_alike(got: Tuple[List[float], Dict[str, np.ndarray]], want: Tuple[List[float], Dict[str, np.ndarray]]) -> None:
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6, err_msg="training losses")
    for key, value in want[1].items():
        np.testing.assert_allclose(got[1][key], value, rtol=1e-5, atol=1e-6, err_msg=f"parameter {key}")


@pytest.fixture(scope="module")
def modules(transpile, tmp_path_factory) -> Tuple[Any, Any, str]:
    """The original module, the transpiled one (importable as MODULE from its directory)
    and that directory."""
    import_dir = str(tmp_path_factory.mktemp("importable"))
    original = harness.load_module(PATH, "e2e_special_train_after_load")
    return original, importable_copy(transpile(PATH), import_dir), import_dir


# The refusal of an export whose calls are not built again (2.6.2: none is), naming the class.
NOT_BUILT_AGAIN = rf"PyLayer \S*{MODULE}\.\w+ inlined for inference \(pylayer2static\)"


@pytest.mark.parametrize("name", ("QuantLinear", "GatedAct"))
def test_training_after_load_equals_training_the_original(modules, tmp_path, name: str) -> None:
    original, transpiled, import_dir = modules
    state = initial_state(original, name)
    want = train_original(original, name, state)
    assert len(set(want[0])) == original.STEPS  # the model learns: a stale step would show
    for key, value in want[1].items():
        # Each parameter moves (the quantized weight only through the straight-through
        # estimator: round's own gradient is zero).
        assert not np.allclose(value, state[key]), key
    if not harness.PIR:
        with pytest.raises(TrainingFailed, match=NOT_BUILT_AGAIN):
            train_after_load(transpiled, name, state, str(tmp_path), import_dir)
        return
    assert_trained_alike(train_after_load(transpiled, name, state, str(tmp_path), import_dir), want)


def test_a_class_that_cannot_be_imported_is_named(modules, tmp_path) -> None:
    original, transpiled, _ = modules
    refusal = (rf"PyLayer FakeQuantSTE's custom backward again, from module '{MODULE}', and importing "
               rf"'{MODULE}' failed" if harness.PIR else NOT_BUILT_AGAIN)
    with pytest.raises(TrainingFailed, match=refusal):
        train_after_load(transpiled, "QuantLinear", initial_state(original, "QuantLinear"), str(tmp_path))


def test_an_export_without_its_records_refuses_training_naming_the_class(modules, tmp_path) -> None:
    original, transpiled, import_dir = modules
    with pytest.raises(TrainingFailed, match=NOT_BUILT_AGAIN):
        train_after_load(transpiled, "GatedAct", initial_state(original, "GatedAct"), str(tmp_path), import_dir,
                         records=False)


def test_an_unrecorded_call_refuses_training_and_still_infers(modules, tmp_path) -> None:
    original, transpiled, import_dir = modules
    state = initial_state(original, "LambdaAct")
    refusal = (rf"could not record a call of PyLayer {MODULE}\.Shaped when it was saved \(an argument "
               r"of the call is function .*<lambda>.*, which JSON cannot carry\)" if harness.PIR else NOT_BUILT_AGAIN)
    with pytest.raises(TrainingFailed, match=refusal):
        train_after_load(transpiled, "LambdaAct", state, str(tmp_path), import_dir)
    model = getattr(transpiled, "LambdaAct")()
    model.set_state_dict(state)
    model.eval()
    loaded = paddle.jit.load(str(tmp_path / "LambdaAct"))
    loaded.eval()
    x = paddle.to_tensor(original.batches(1)[0][0])
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
