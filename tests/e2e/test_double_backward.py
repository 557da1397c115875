"""Double backward through a PyLayer: equal to eager in dynamic mode; in static graphs a
framework limitation on both IRs, reported by the framework when autodiff reaches the
backward op (paddle 3.3.1 PIR: the backward pylayer op has no backward function,
ir_backward.py call_vjp "backward function id of pylayer op should be non-negative";
2.6.2: no GradOpMaker for pylayer_grad). The framework's own path fails the same way."""
import os
import re
from typing import Any, List

import numpy as np
import paddle
import pytest

import harness
from conftest import HERE

PATH = os.path.join(HERE, "special", "double_backward.py")
NOT_DIFFERENTIABLE = re.compile(
    r"backward function id of pylayer op should be non-negative|pylayer_grad's GradOpMaker"
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


@pytest.mark.parametrize("mode", ("to_static", "static"))
def test_static_double_backward_is_refused_by_the_framework(modules, mode: str) -> None:
    _, transpiled = modules
    with pytest.raises(Exception, match=NOT_DIFFERENTIABLE):
        run(transpiled, mode)
