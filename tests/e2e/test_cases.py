"""Each case in cases/, original run eagerly vs transpiled run in every mode."""
import os
from typing import Any, Dict, Tuple

import numpy as np
import pytest

import harness
from conftest import CASES_DIR, case_names

RTOL, ATOL = 1e-6, 1e-7
_MODULES: Dict[Tuple[str, str], Any] = {}
_REFERENCE: Dict[str, Any] = {}


def _reference(name: str, original: Any) -> Tuple[Dict[str, np.ndarray], harness.Result]:
    if name not in _REFERENCE:
        state = harness.reference_state(original)
        _REFERENCE[name] = (state, harness.run_eager(original, state))
    return _REFERENCE[name]


def _assert_same(actual: harness.Result, expected: harness.Result, with_grads: bool = True) -> None:
    assert len(actual.outputs) == len(expected.outputs), "number of output tensors"
    for got, want in zip(actual.outputs, expected.outputs):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    if with_grads:
        assert sorted(actual.grads) == sorted(expected.grads)
        for name, want in expected.grads.items():
            got = actual.grads[name]
            if want is None:
                assert got is None or not np.any(got), f"gradient of {name}: eager has none"
            else:
                assert got is not None, f"gradient of {name} missing"
                np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"gradient of {name}")


def _original(name: str) -> Any:
    key = (name, "original")
    if key not in _MODULES:
        _MODULES[key] = harness.load_module(os.path.join(CASES_DIR, name + ".py"), f"e2e_original_{name}")
    return _MODULES[key]


def _modules(name: str, transpile) -> Tuple[Any, Any]:
    """(original module, transpiled module) of a case, imported once per process."""
    key = (name, "transpiled")
    if key not in _MODULES:
        path = os.path.join(CASES_DIR, name + ".py")
        _MODULES[key] = harness.load_module(transpile(path), f"e2e_transpiled_{name}")
    return _original(name), _MODULES[key]


PARAMS = [(name, mode) for name in case_names() for mode in harness.case_modes(_original(name))]


@pytest.mark.parametrize("name,mode", PARAMS, ids=[f"{n}-{m}" for n, m in PARAMS])
def test_case(name: str, mode: str, transpile) -> None:
    original, transpiled = _modules(name, transpile)
    state, expected = _reference(name, original)
    if mode == "eager":
        _assert_same(harness.run_eager(transpiled, state), expected)
    elif mode == "to_static":
        result = harness.run_to_static(transpiled, state)
        _assert_same(result, expected)
        assert result.pylayer_ops >= 1, "the to_static program holds no pylayer op"
    elif mode == "sot":
        _assert_same(harness.run_sot(transpiled, state), expected)
    elif mode == "static":
        result = harness.run_static(transpiled, state)
        _assert_same(result, expected)
        assert result.pylayer_ops >= 1, "the static program holds no pylayer op"
    elif mode == "jit_save":
        loaded, predicted = harness.run_jit_save(transpiled, state)
        _assert_same(loaded, expected, with_grads=False)
        _assert_same(predicted, expected, with_grads=False)
        assert predicted.pylayer_ops >= 1, "the saved inference program holds no pylayer op"
    elif mode == "train":
        steps = getattr(original, "STEPS", 3)
        want = harness.train_losses(original, state, lambda m: m, steps)
        got = harness.train_losses(transpiled, state, lambda m: harness.paddle.jit.to_static(m, full_graph=True), steps)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        got_static = harness.static_train_losses(transpiled, state, steps)
        np.testing.assert_allclose(got_static, want, rtol=RTOL, atol=ATOL)
