"""No gradient work nobody needs (issue 33): the ops of a PyLayer's backward whose results no
gradient uses are dropped from the programs executors run, as autodiff leaves them out for
built-in ops (pir/unused.py, legacy/unused.py).

special/unused_backward_work.py: a LoRA linear whose backward computes the gradients of its
data input and frozen base weight too, and returns None for them. Under to_static its backward
program holds exactly the ops of its twin's (the same math with built-in ops), and every mode
that trains still gives eager's gradients and losses.
"""
import os
import types
from collections import Counter
from typing import Any

import paddle
import pytest

import harness
from conftest import HERE
from pylayer2static_runtime.core.effects import has_effects

PATH = os.path.join(HERE, "special", "unused_backward_work.py")


@pytest.fixture(scope="module")
def modules(transpile):
    original = harness.load_module(PATH, "e2e_special_unused_backward_work")
    transpiled = harness.load_module(transpile(PATH), "e2e_special_unused_backward_work_p2s")
    return original, transpiled, harness.reference_state(original)


def _ops(program: Any) -> Counter:
    """The ops of a PIR or legacy program's global block by name."""
    if harness.PIR:
        return Counter(op.name() for op in program.global_block().ops)
    return Counter(op.type for op in program.global_block().ops)


def backward_ops(module: Any, state: Any) -> Counter:
    """The ops of the backward program a to_static training step of `module.Model` ran."""
    holder = {}

    def wrap(model: Any) -> Any:
        holder["fn"] = paddle.jit.to_static(model, full_graph=True)
        return holder["fn"]

    harness._dynamic(module, state, wrap)
    _, (_, layer) = holder["fn"].forward.program_cache.last()
    ran = layer.train_program if harness.PIR else layer
    return _ops(ran.backward_program)


def test_backward_holds_the_twins_op_count(modules) -> None:
    original, transpiled, state = modules
    ours = backward_ops(transpiled, state)
    twin = backward_ops(types.SimpleNamespace(Model=original.TwinModel, INPUTS=original.INPUTS), state)
    assert sum(ours.values()) == sum(twin.values()), f"backward ops {dict(ours)} against the twin's {dict(twin)}"


@pytest.mark.parametrize("mode", ("to_static", "static", "train"))
def test_gradients_equal_eager(modules, mode: str) -> None:
    original, transpiled, state = modules
    harness.check_mode(transpiled, original, mode, state, harness.run_eager(original, state))


@pytest.mark.parametrize("op_type", ("pd_op.dropout", "dropout", "pd_op.sgd_", "print", "pd_op.all_reduce", "fetch_v2"))
def test_ops_with_effects_stay(op_type: str) -> None:
    """A random draw moves the generator on, an in-place op writes its input, a print or a
    collective does something: each stays whatever reads its results."""
    assert has_effects(op_type)


@pytest.mark.parametrize("op_type", ("pd_op.matmul", "matmul_v2", "pd_op.add", "elementwise_add", "scatter"))
def test_pure_ops_may_go(op_type: str) -> None:
    assert not has_effects(op_type)
