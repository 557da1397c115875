"""Fine-tuning after `paddle.jit.load` in a fresh process: save, load in a new process and
train 10 SGD steps; the losses and parameters must equal training the original eagerly (a
straight-through fake quantizer; a PyLayer given a function, a string, a tuple and a dict).
The framework's own export keeps backward as an id into the saving process's registry;
pylayer2static records each call beside the export and builds it again (paddle 3.x), and the
legacy IR (2.6.2) refuses (see test_train_after_load.py).

Each PyLayer's backward differs from autodiff of its forward, so training the loaded model
equals training the original only if the custom backward is what runs:
- `QuantLinear`: quantization-aware training with a straight-through estimator (round's
  gradient is zero; the estimator passes the gradient through inside the clipping range),
  the bit width a non-tensor argument, the scale a tensor that stops gradient;
- `GatedAct`: a PyLayer given a function (`paddle.tanh`, recorded by its qualified name),
  a string, a tuple and a dict, positionally and by keyword, whose backward scales the
  gradient by a factor from the dict;
- `LambdaAct`: the same PyLayer given a lambda, which an export cannot record: training
  the loaded model is refused, naming the class; inference still runs.
"""
import numpy as np
import paddle
from paddle.autograd import PyLayer


class FakeQuantSTE(PyLayer):
    @staticmethod
    def forward(ctx, x, scale, bits):
        levels = float((1 << (bits - 1)) - 1)
        scale = paddle.clip(scale, min=1e-8)
        ctx.save_for_backward(paddle.cast(paddle.abs(x) <= scale, x.dtype))
        return paddle.round(paddle.clip(x / scale, -1.0, 1.0) * levels) / levels * scale

    @staticmethod
    def backward(ctx, grad):
        (inside,) = ctx.saved_tensor()
        return grad * inside, None


class Shaped(PyLayer):
    @staticmethod
    def forward(ctx, x, act, mode, dims=(1.0, 0.0), opts=None):
        ctx.grad_scale = (opts or {}).get("grad_scale", 1.0)
        ctx.mode = mode
        y = act(x) * dims[0] + dims[1]
        ctx.save_for_backward(y)
        return y * 2.0 if mode == "double" else y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        g = dy * 2.0 if ctx.mode == "double" else dy
        return g * ctx.grad_scale * (1.0 - 0.5 * y * y)


class QuantLinear(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(6, 8)
        self.fc2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        w = self.fc1.weight
        w = FakeQuantSTE.apply(w, paddle.max(paddle.abs(w), axis=0, keepdim=True).detach(), 4)
        h = paddle.nn.functional.relu(paddle.matmul(x, w) + self.fc1.bias)
        h = FakeQuantSTE.apply(h, paddle.full([1], 2.0), bits=8)
        return self.fc2(h)


class GatedAct(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(6, 8)
        self.fc2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        h = Shaped.apply(self.fc1(x), paddle.tanh, "double", (0.5, 0.1), opts={"grad_scale": 3.0})
        return Shaped.apply(self.fc2(h), paddle.nn.functional.sigmoid, mode="plain")


class LambdaAct(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(6, 3)

    def forward(self, x):
        return Shaped.apply(self.fc(x), lambda t: t * 0.5, "plain")


MODELS = ("QuantLinear", "GatedAct")
STEPS = 10
LEARNING_RATE = 0.1


def batches(steps: int = STEPS):
    """(input, target) pairs, the same in every process."""
    rng = np.random.RandomState(0)
    return [(rng.standard_normal([4, 6]).astype("float32"), rng.standard_normal([4, 3]).astype("float32"))
            for _ in range(steps)]


def train(model, data):
    """SGD on the mean squared error: the loss of each step."""
    optimizer = paddle.optimizer.SGD(LEARNING_RATE, parameters=model.parameters())
    losses = []
    for x, y in data:
        loss = paddle.mean(paddle.square(model(paddle.to_tensor(x)) - paddle.to_tensor(y)))
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    return losses
