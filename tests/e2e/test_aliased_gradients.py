"""A deliberate difference from eager: backward returning one tensor for two inputs.

Eager paddle (3.3.1 and 2.6.2) gives both inputs that very tensor as their gradient; when one
of them then accumulates another gradient (a tied parameter), it adds in place into the shared
tensor and the other input's gradient changes with it. The transpiled static graph gives each
input its own gradient value (op.py: `paddle.assign` of a gradient returned twice), the
mathematically right answer: equal to eager with backward returning a clone
(special/aliased_gradients.py). docs/SUPPORT.md lists the difference.
"""
import os
import types

import numpy as np
import pytest

import harness
from conftest import HERE

PATH = os.path.join(HERE, "special", "aliased_gradients.py")


@pytest.fixture(scope="module")
def modules(transpile):
    original = harness.load_module(PATH, "e2e_special_aliased_gradients")
    transpiled = harness.load_module(transpile(PATH), "e2e_special_aliased_gradients_p2s")
    # The reference: eager with backward returning its own tensor per input.
    right = types.SimpleNamespace(Model=original.ClonedModel, INPUTS=original.INPUTS)
    state = harness.reference_state(original)
    return original, transpiled, right, state


def test_eager_aliases_the_gradients(modules) -> None:
    original, _, right, state = modules
    aliased = harness.run_eager(original, state).grads
    cloned = harness.run_eager(right, state).grads
    np.testing.assert_allclose(aliased["base_bias"], cloned["base_bias"], rtol=1e-6)
    np.testing.assert_allclose(aliased["lora_bias"], aliased["base_bias"], rtol=1e-6)
    assert not np.allclose(aliased["lora_bias"], cloned["lora_bias"]), "eager no longer aliases: update docs/SUPPORT.md"


@pytest.mark.parametrize("mode", ("to_static", "static", "train"))
def test_static_gives_each_input_its_gradient(modules, mode: str) -> None:
    _, transpiled, right, state = modules
    harness.check_mode(transpiled, right, mode, state, harness.run_eager(right, state))
