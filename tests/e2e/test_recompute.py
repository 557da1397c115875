"""Recompute in a static graph (docs/DESIGN.md "Recompute in a static graph"): it saves memory,
and a recomputed function that draws random numbers is refused.

special/recompute_memory.py trains 8 transformer blocks under to_static (AST), each block plain,
through a CheckpointFunction-style PyLayer, or through fleet's `recompute` (reentrant and not),
each in a fresh process run by `pylayer2static run`. The losses and a gradient equal the plain
run's, and the peak of the host allocator is at most 0.6x the plain run's: a backward that
re-runs its block reads its saved input only once its output gradient exists, so the executor
cannot start every block's re-run as soon as forward is done (which spent all the memory back:
0.98x before). Both pinned versions. Under SOT fleet's recompute (both forms) and the
CheckpointFunction-style PyLayer train bit for bit as eager (the parameters after the steps, the
input's gradient), and on 3.3.1, where SOT records each as one call of its graph, peak at most
0.6x SOT's run without recompute (before, SOT inlined fleet's non-reentrant form: no saving; and
ran the PyLayer eagerly, its forward reading the block's parameters directly);
test_sot_capture.py counts their graph breaks.
"""
import json
import os
import subprocess
import sys

from typing import Any, List, Tuple

import numpy as np
import paddle
import pytest
from pylayer2static_runtime import PyLayerContractError, framework  # before the names below are bound: the runtime replaces them
from paddle.distributed.fleet.utils import recompute
from paddle.incubate.distributed.fleet import recompute_sequential

from conftest import HERE

SCRIPT = os.path.join(HERE, "special", "recompute_memory.py")
LIMIT = 0.6


def _run(form: str, to_static: str = "ast") -> dict:
    env = dict(os.environ, P2S_PYTHON=sys.executable)
    done = subprocess.run([os.environ["P2S_BIN"], "run", SCRIPT, form, "256", "16", to_static], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _least_peak_ratio(form: str, to_static: str, first: dict, plain: dict) -> float:
    """The lowest peak of the run `first` and up to two more fresh runs, stopping at one within
    LIMIT, as a ratio to the `plain` run's: the multi-thread executor's schedule moves the peak from run to run
    on a loaded machine (up to some 0.65x seen), while a recompute whose re-run does not wait for
    backward peaks near the plain run (0.99x) every time."""
    peaks = [first["peak_mb"]]
    while len(peaks) < 3 and min(peaks) > LIMIT * plain["peak_mb"]:
        peaks.append(_run(form, to_static)["peak_mb"])
    return min(peaks) / plain["peak_mb"]


@pytest.fixture(scope="module")
def plain() -> dict:
    return _run("none")


@pytest.fixture(scope="module")
def eager_plain() -> dict:
    return _run("none", "eager")


@pytest.fixture(scope="module")
def sot_plain() -> dict:
    return _run("none", "sot")


@pytest.mark.parametrize("form", ["user", "fleet", "fleet_nr"])
def test_recompute_saves_memory(plain: dict, form: str) -> None:
    got = _run(form)
    np.testing.assert_allclose(got["losses"], plain["losses"], rtol=1e-5)
    np.testing.assert_allclose(got["grad"], plain["grad"], rtol=1e-4)
    ratio = _least_peak_ratio(form, "ast", got, plain)
    assert ratio <= LIMIT, f"{form}: peak is {ratio:.2f}x the plain run's {plain['peak_mb']:.0f} MB (least of 3 runs)"


@pytest.mark.parametrize("form", ["user", "fleet", "fleet_nr"])
def test_recompute_under_sot_trains_as_eager_and_saves_memory(eager_plain: dict, sot_plain: dict, form: str) -> None:
    """Under SOT (`to_static(full_graph=False)`) each recompute form trains bit for bit as eager
    without recompute (the parameters after 3 steps and the input's gradient), and on releases
    where SOT records it as one call of its graph (paddle 3.3.1: `paddle.jit.marker.unified`) keeps
    the saving: peak at most 0.6x SOT's run without recompute. Without the marker (2.6.2) SOT
    breaks the graph at the PyLayer call, or simulates Paddle's eager recompute and breaks in it,
    and runs it eagerly (eager's own saving)."""
    got = _run(form, "sot")
    assert got["losses"] == eager_plain["losses"]
    assert got["trained"] == eager_plain["trained"], f"{form}: training under SOT differs from eager's"
    if framework.sot_unified_marker() is None:
        return
    ratio = _least_peak_ratio(form, "sot", got, sot_plain)
    assert ratio <= LIMIT, f"{form}: SOT peak is {ratio:.2f}x the SOT run's {sot_plain['peak_mb']:.0f} MB (least of 3 runs)"


class _Dropping(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.linear = paddle.nn.Linear(4, 4)

    def forward(self, x: Any) -> Any:
        return paddle.nn.functional.dropout(self.linear(x), p=0.1, training=self.training)


class _Recomputed(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.block = _Dropping()

    def forward(self, x: Any) -> Any:
        return recompute(self.block, x)


def test_random_ops_in_a_recomputed_function_are_refused() -> None:
    """Eager's recompute restores the random state for the re-run; a static graph would draw a
    new dropout mask in backward: refused at build, naming the function and the op. In eval
    mode (no random op) the same model builds and equals eager."""
    import pylayer2static_runtime  # noqa: F401  the runtime's recompute, as transpiled code imports it

    paddle.seed(3)
    x = paddle.ones([2, 4])
    x.stop_gradient = False
    with pytest.raises(PyLayerContractError, match=r"draws random numbers \(dropout\)"):
        paddle.jit.to_static(_Recomputed(), full_graph=True)(x)
    eager = _Recomputed()
    eager.eval()
    static = _Recomputed()
    static.set_state_dict(eager.state_dict())
    static.eval()
    got = paddle.jit.to_static(static, full_graph=True)(x)
    np.testing.assert_allclose(got.numpy(), eager(x).numpy(), rtol=1e-6)


def test_random_ops_in_a_recomputed_function_run_eagerly_under_sot() -> None:
    """Under SOT the same model in training is no error: building the call is refused as above,
    which SOT takes as a graph break at the call (sot.py `built_in_graph`), and the call runs
    eagerly, Paddle's recompute restoring the random state: the result and the gradients equal
    eager's with the same seed, bit for bit. Also after a run in eval mode, whose build SOT
    accepted (no random op then): the training run's is inferred again, not taken from SOT's
    cache, so it breaks too (it failed while SOT compiled its graph). (On 2.6.2 SOT runs
    Paddle's own eagerly anyway.)"""
    from paddle.jit.sot.utils.envs import min_graph_size_guard  # paddle 3.3.1 and 2.6.2

    paddle.seed(3)
    model = _Recomputed()
    x = paddle.ones([2, 4])
    x.stop_gradient = False
    model.eval()
    evaluated = model(x).numpy()
    model.train()
    paddle.seed(10)
    want = model(x).sum()
    want.backward()
    expected = [p.grad.numpy().copy() for p in model.parameters()]
    model.clear_gradients()
    static = paddle.jit.to_static(model, full_graph=False)
    with min_graph_size_guard(0):
        model.eval()
        np.testing.assert_array_equal(static(x).numpy(), evaluated)
        model.train()
        paddle.seed(10)
        got = static(x).sum()
        got.backward()
    assert float(got) == float(want)
    for g, e in zip([p.grad.numpy() for p in model.parameters()], expected):
        np.testing.assert_array_equal(g, e)


class _Segmented(paddle.nn.Layer):
    def __init__(self, blocks: Any) -> None:
        super().__init__()
        self.blocks = blocks

    def forward(self, x: Any) -> Any:
        return recompute_sequential({"segments": 2, "preserve_rng_state": False}, self.blocks, x).sum()


def _sequential_and_its_gradients() -> Tuple[Any, Any, Any, List[np.ndarray]]:
    """Four small blocks in a Sequential, an input, and the plain (eager) run's loss and the
    gradients of the parameters and the input, which are cleared again."""
    paddle.seed(5)
    blocks = paddle.nn.Sequential(*[paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Tanh()) for _ in range(4)])
    x = paddle.to_tensor(np.random.RandomState(0).randn(3, 4).astype("float32"), stop_gradient=False)
    want = blocks(x).sum()
    want.backward()
    expected = [p.grad.numpy().copy() for p in blocks.parameters()] + [x.grad.numpy().copy()]
    blocks.clear_gradients()
    x.clear_gradient()
    return blocks, x, want, expected


def test_recompute_sequential_in_two_segments_equals_the_model_without_recompute() -> None:
    """`recompute_sequential` with two segments under to_static: the first segment is one
    recompute op, and the second takes that segment's output as its input. Compared with the
    same Sequential run plainly (eager): paddle 3.3.1's own eager `recompute_sequential` passes
    the last segment `*args` over the rows of that output (a TypeError, or a wrong result with one
    row), so it is no reference (docs/SUPPORT.md lists the difference)."""
    import pylayer2static_runtime  # noqa: F401

    blocks, x, want, expected = _sequential_and_its_gradients()
    got = paddle.jit.to_static(_Segmented(blocks), full_graph=True)(x)
    got.backward()
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6)
    for g, e in zip([p.grad.numpy() for p in blocks.parameters()] + [x.grad.numpy()], expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_recompute_sequential_under_sot_equals_the_model_without_recompute() -> None:
    """The same under SOT (`to_static(full_graph=False)`, its minimum graph size 0: SOT runs a
    smaller graph eagerly), bit for bit. On paddle 3.3.1 the call is one call of SOT's graph, built
    as the runtime's: Paddle's own, run eagerly, fails here (above), so a graph break or an eager
    fallback at it would fail the test. On 2.6.2 SOT simulates Paddle's own, which breaks the graph
    and runs eagerly (there it passes the last segment the first one's output as it is)."""
    from paddle.jit.sot.utils.envs import min_graph_size_guard  # paddle 3.3.1 and 2.6.2

    blocks, x, want, expected = _sequential_and_its_gradients()
    with min_graph_size_guard(0):
        got = paddle.jit.to_static(_Segmented(blocks), full_graph=False)(x)
        got.backward()
    assert float(got) == float(want)
    for g, e in zip([p.grad.numpy() for p in blocks.parameters()] + [x.grad.numpy()], expected):
        np.testing.assert_array_equal(g, e)


class _Rotary(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.linear = paddle.nn.Linear(8, 8)

    def forward(self, x: Any, position_embeddings: Any = None, scale: float = 1.0) -> Any:
        cos, sin = position_embeddings
        return self.linear(x * cos + sin) * scale


class _RotaryModel(paddle.nn.Layer):
    def __init__(self, recomputed: bool) -> None:
        super().__init__()
        self.block = _Rotary()
        self.recomputed = recomputed

    def forward(self, x: Any) -> Any:
        rotary = (paddle.cos(x), paddle.sin(x))
        if self.recomputed:
            return recompute(self.block, x, rotary, 0.5).sum()
        return self.block(x, rotary, 0.5).sum()


def test_recompute_with_a_tuple_of_tensors_equals_the_model_without_recompute() -> None:
    """A tuple of tensors made from the input (rotary embeddings, as PaddleFormers' decoder
    layers take `position_embeddings=(cos, sin)`): its tensors are the op's inputs, and the
    gradient reaches the input through them. Compared with the model without recompute: paddle
    2.6.2's eager recompute gives the input another gradient here (docs/SUPPORT.md lists it)."""
    paddle.seed(7)
    plain, recomputed = _RotaryModel(False), _RotaryModel(True)
    recomputed.set_state_dict(plain.state_dict())
    x = paddle.to_tensor(np.random.RandomState(1).randn(3, 8).astype("float32"), stop_gradient=False)
    want = plain(x)
    want.backward()
    expected = [x.grad.numpy().copy(), plain.block.linear.weight.grad.numpy().copy()]
    x.clear_gradient()
    got = paddle.jit.to_static(recomputed, full_graph=True)(x)
    got.backward()
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6)
    for g, e in zip([x.grad.numpy(), recomputed.block.linear.weight.grad.numpy()], expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
