"""Built-in twins: small models with no PyLayer, each holding one op paddle2onnx cannot convert,
written with the API that makes it. A case of unconverted.txt names its twin: that the twin
fails on the same op shows the gap is paddle2onnx's, met by a model written with built-in ops,
and not something the transpiled export adds."""
import os
from typing import Any, Dict, List, Type

import numpy as np
import paddle


class MeanAll(paddle.nn.Layer):
    """`paddle.mean(x)`: the mean of every element, a 0-D tensor."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x: Any) -> Any:
        return paddle.mean(paddle.tanh(self.linear(x)))


# Read once, eagerly: under to_static the call gets no place (paddle 3.3.1), as the case's is.
AMP = paddle.amp.is_bfloat16_supported()


class Bfloat16Linear(paddle.nn.Layer):
    """A Linear under `paddle.amp.auto_cast(dtype="bfloat16")`, where the CPU supports it
    (tests/e2e/cases/under_amp.py's switch)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x: Any) -> Any:
        with paddle.amp.auto_cast(enable=AMP, level="O1", dtype="bfloat16"):
            h = paddle.tanh(self.linear(x))
        return paddle.cast(h, "float32")


TWINS: Dict[str, Type[paddle.nn.Layer]] = {"mean_all": MeanAll, "bfloat16_linear": Bfloat16Linear}


def export(name: str, where: str) -> None:
    """jit.save twin `name` into `where` (model.*), with its input and eager output (ref.npz)."""
    paddle.seed(0)
    model = TWINS[name]()
    model.eval()
    x = np.random.RandomState(0).standard_normal([2, 4]).astype("float32")
    outputs: List[Any] = [model(paddle.to_tensor(x)).numpy()]
    os.makedirs(where, exist_ok=True)
    np.savez(os.path.join(where, "ref.npz"), x0=x, **{f"out{i}": o for i, o in enumerate(outputs)})
    paddle.jit.save(model, os.path.join(where, "model"),
                    input_spec=[paddle.static.InputSpec([-1, 4], "float32", "x0")])
