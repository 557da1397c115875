"""Double backward through a PyLayer: the gradient of a gradient, in dynamic mode and in
static graphs.

paddle 3.3.1 (PIR): the pylayer op autodiff builds as a PyLayer's gradient has no backward of
its own ("backward function id of pylayer op should be non-negative", the framework's own
path); the runtime inlines it as autodiff builds it (pir/double_backward.py `_inline_grad_op`), so that a
second autodiff differentiates backward's ops as eager does under create_graph. A backward
that reads a tensor forward computed and saved is refused then, naming the class.
paddle 2.6.2 (legacy IR): no GradOpMaker for pylayer_grad; the framework refuses, also on
its own path ("Neither operator pylayer_grad's GradOpMaker ..."); for a transpiled PyLayer the
runtime refuses first, naming the class and the user's line that asked for the gradient
(legacy/hooks.py `_refusing_double_backward`).
"""
import os
import re
from typing import Any, List

import numpy as np
import paddle
import pytest

import harness
from conftest import HERE

PATH = os.path.join(HERE, "special", "double_backward.py")
LEGACY_REFUSAL = re.compile(
    r"PyLayer \w+ \(\S+:\d+\): a gradient of a gradient \(paddle.grad with create_graph=True, then a gradient "
    r"of its result\) at \S+:\d+ goes through this PyLayer's backward, which the legacy Program IR \(paddle 2.6\) "
    r"cannot differentiate"
)


def _input() -> np.ndarray:
    return np.random.RandomState(0).standard_normal([2, 3]).astype("float32")


def run(module: Any, mode: str) -> List[np.ndarray]:
    """y, dy/dx and the second derivative in `mode` (eager, to_static or static)."""
    if mode == "static":
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data("x", [2, 3], "float32")
                x.stop_gradient = False
                outs = module.second_order(x)
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            return exe.run(main, feed={"x": _input()}, fetch_list=list(outs))
        finally:
            paddle.disable_static()
    x = paddle.to_tensor(_input())
    x.stop_gradient = False
    fn = module.second_order if mode == "eager" else paddle.jit.to_static(module.second_order, full_graph=True)
    return [t.numpy() for t in fn(x)]


@pytest.fixture(scope="module")
def modules(transpile):
    original = harness.load_module(PATH, "e2e_special_double_backward")
    transpiled = harness.load_module(transpile(PATH), "e2e_special_double_backward_p2s")
    return original, transpiled


def test_eager_double_backward_equals_the_original(modules) -> None:
    original, transpiled = modules
    want = run(original, "eager")
    np.testing.assert_allclose(want[2], 6.0 * _input(), rtol=1e-6)
    for got, exp in zip(run(transpiled, "eager"), want):
        np.testing.assert_allclose(got, exp, rtol=1e-6)


def _line_of(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as f:
        return next(number for number, line in enumerate(f, 1) if text in line)


@pytest.mark.parametrize("mode", ("to_static", "static"))
def test_static_double_backward(modules, mode: str) -> None:
    original, transpiled = modules
    if not harness.PIR:
        with pytest.raises(Exception) as info:
            run(transpiled, mode)
        path, text = transpiled.__file__, str(info.value)
        second = "paddle.grad([paddle.sum(g)]" if mode == "to_static" else "paddle.static.gradients([paddle.sum(g)]"
        assert type(info.value).__name__ == "PyLayerContractError", text
        assert LEGACY_REFUSAL.search(text), text
        assert f"PyLayer Cube ({path}:{_line_of(path, 'class Cube(PyLayer):')})" in text, text
        assert f" at {path}:{_line_of(path, second)} " in text, text
        return
    for got, exp in zip(run(transpiled, mode), run(original, "eager")):
        np.testing.assert_allclose(got, exp, rtol=1e-5)


TRAINING = os.path.join(HERE, "special", "gradient_penalty.py")
STEPS = 5


@pytest.fixture(scope="module")
def training(transpile):
    original = harness.load_module(TRAINING, "e2e_special_gradient_penalty")
    transpiled = harness.load_module(transpile(TRAINING), "e2e_special_gradient_penalty_p2s")
    return original, transpiled


def _batches(module: Any, loss: str) -> List[List[np.ndarray]]:
    rng = np.random.RandomState(0)
    make = module.critic_inputs if loss == "CriticLoss" else module.poisson_inputs
    return [make(rng) for _ in range(STEPS)]


def _losses(module: Any, loss: str, mode: str, state: Any, batches: List[List[np.ndarray]], **kwargs: Any) -> List[float]:
    """The losses of STEPS SGD steps of `module.<loss>` from `state`, in `mode`."""
    if mode == "static":
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                layer = getattr(module, loss)(**kwargs)
                feeds = [paddle.static.data(f"in{i}", a.shape, "float32") for i, a in enumerate(batches[0])]
                value = layer(*feeds)
                paddle.optimizer.SGD(0.05).minimize(value)
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            layer.set_state_dict(state)
            return [float(exe.run(main, feed={f"in{i}": a for i, a in enumerate(b)}, fetch_list=[value])[0])
                    for b in batches]
        finally:
            paddle.disable_static()
    layer = getattr(module, loss)(**kwargs)
    layer.set_state_dict(state)
    optimizer = paddle.optimizer.SGD(0.05, parameters=layer.parameters())
    step = layer if mode == "eager" else paddle.jit.to_static(layer, full_graph=True)
    losses = []
    for batch in batches:
        value = step(*[paddle.to_tensor(a) for a in batch])
        value.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(value))
    return losses


@pytest.mark.parametrize("loss", ("CriticLoss", "PoissonLoss"))
@pytest.mark.parametrize("mode", ("eager", "to_static", "static"))
def test_training_through_a_double_backward(training, loss: str, mode: str) -> None:
    original, transpiled = training
    paddle.seed(0)
    state = {k: v.numpy() for k, v in getattr(original, loss)().state_dict().items()}
    batches = _batches(original, loss)
    want = _losses(original, loss, "eager", state, batches)
    if mode != "eager" and not harness.PIR:
        with pytest.raises(Exception, match=LEGACY_REFUSAL):
            _losses(transpiled, loss, mode, state, batches)
        return
    got = _losses(transpiled, loss, mode, state, batches)
    assert len(set(want)) == STEPS  # the model learns: a stale step would show
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ("to_static", "static"))
def test_a_saved_intermediate_refuses_double_backward_naming_the_class(training, mode: str) -> None:
    _, transpiled = training
    paddle.seed(0)
    state = {k: v.numpy() for k, v in transpiled.CriticLoss(transpiled.SwishSavingSigmoid).state_dict().items()}
    batches = _batches(transpiled, "CriticLoss")
    refusal = r"PyLayer \S*SwishSavingSigmoid's backward .*forward computed and saved" if harness.PIR else LEGACY_REFUSAL
    with pytest.raises(Exception, match=refusal):
        _losses(transpiled, "CriticLoss", mode, state, batches, activation=transpiled.SwishSavingSigmoid)
