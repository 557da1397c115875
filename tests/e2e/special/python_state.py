"""PyLayers whose bodies touch Python state, in the style of real code: each `Model*` applies one
kind three times per step; `STATE()` is what the bodies and the model wrote, for comparison.
tests/e2e/test_python_state.py runs them eagerly and transpiled under to_static (AST, SOT), as a
static program (calls alike: the replay's case) and compares with eager.

- `InitOnceQuant`: an activation fake quant that takes its scale from the first batch and keeps
  it on the class (`InitOnceQuant.scale`, `initialized`), counting its calls there too;
- `RoutedStats`: an MoE gate that counts the tokens each expert gets in a module-level dict and
  logs the order of its calls in a list; its backward counts its own calls there too;
- `CountedRouter`: a router counting its calls and tokens on a statistics object the model
  passes to `apply`;
- `ConfigClip`: a clip whose bound the model writes into a module-level config dict just
  before the call;
- `Unpermute`: ERNIE/PaddleFormers' `FusedUnpermutation` style, setting
  `stop_gradient = False` on its token input in forward;
- `SplitGate`: a SwiGLU-like gate calling `split_new`, a method patched onto `paddle.Tensor`
  as a lambda (as ERNIE's modeling code does).
"""
import paddle
from paddle.autograd import PyLayer

paddle.Tensor.split_new = lambda x, size, axis=-1: paddle.split(x, [size, x.shape[axis] - size], axis=axis)

EXPERT_TOKENS = {"expert0": 0, "expert1": 0, "backward_calls": 0}
CALL_LOG = []
CONFIG = {"clip": 1.0}


class InitOnceQuant(PyLayer):
    initialized = False
    scale = 1.0
    calls = 0

    @staticmethod
    def forward(ctx, x):
        InitOnceQuant.calls += 1
        if not InitOnceQuant.initialized:
            InitOnceQuant.scale = 4.0 / 127.0
            InitOnceQuant.initialized = True
        ctx.scale = InitOnceQuant.scale * InitOnceQuant.calls
        return paddle.round(x / ctx.scale) * ctx.scale

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.scale


class RoutedStats(PyLayer):
    @staticmethod
    def forward(ctx, logits, name):
        CALL_LOG.append(name)
        EXPERT_TOKENS["expert0"] += 1
        EXPERT_TOKENS["expert1"] += 2
        ctx.weight = float(EXPERT_TOKENS["expert1"])
        return paddle.nn.functional.softmax(logits, axis=-1) * ctx.weight

    @staticmethod
    def backward(ctx, dy):
        EXPERT_TOKENS["backward_calls"] += 1
        return dy * ctx.weight


class TokenStats:
    """A router's statistics, kept by the model and passed to its PyLayer."""

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = 0


ROUTER_STATS = TokenStats()


class CountedRouter(PyLayer):
    @staticmethod
    def forward(ctx, logits, stats):
        stats.calls += 1
        stats.tokens += int(logits.shape[0])
        ctx.weight = float(stats.calls)
        return logits * ctx.weight

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.weight


class ConfigClip(PyLayer):
    @staticmethod
    def forward(ctx, x):
        bound = CONFIG["clip"]
        ctx.bound = bound
        return paddle.clip(x, -bound, bound)

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.bound


class Unpermute(PyLayer):
    @staticmethod
    def forward(ctx, tokens, probs):
        tokens.stop_gradient = False
        ctx.save_for_backward(tokens, probs)
        return tokens * probs

    @staticmethod
    def backward(ctx, dy):
        tokens, probs = ctx.saved_tensor()
        return dy * probs * 2.0, dy * tokens


class SplitGate(PyLayer):
    @staticmethod
    def forward(ctx, x):
        gate, up = x.split_new(x.shape[-1] // 2)
        ctx.save_for_backward(gate, up)
        return gate * up

    @staticmethod
    def backward(ctx, dy):
        gate, up = ctx.saved_tensor()
        return paddle.concat([dy * up, dy * gate], axis=-1)


class _Base(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.proj = paddle.nn.Linear(4, 4)


class ModelInitOnceQuant(_Base):
    def forward(self, x, t):
        h = self.proj(x)
        # one call a statement: paddle 2.6.2's SOT loses a gradient across a graph break inside
        # one expression (docs/SUPPORT.md), and there every PyLayer call breaks the graph
        first = InitOnceQuant.apply(h)
        second = InitOnceQuant.apply(h * 2.0)
        third = InitOnceQuant.apply(h * 3.0)
        return first + second + third


class ModelRoutedStats(_Base):
    def forward(self, x, t):
        h = self.proj(x)
        first = RoutedStats.apply(h, "layer0")
        second = RoutedStats.apply(h, "layer1")
        third = RoutedStats.apply(h, "layer2")
        return first + second + third


class ModelCountedRouter(_Base):
    def forward(self, x, t):
        h = self.proj(x)
        first = CountedRouter.apply(h, ROUTER_STATS)
        second = CountedRouter.apply(h * 2.0, ROUTER_STATS)
        return first + second


class ModelConfigClip(_Base):
    def __init__(self) -> None:
        super().__init__()
        self.bound = 0.0

    def forward(self, x, t):
        h = self.proj(x) * 10.0
        self.bound = self.bound + 0.5
        CONFIG["clip"] = self.bound
        first = ConfigClip.apply(h)
        second = ConfigClip.apply(h * 2.0)
        return first + second


class ModelUnpermute(_Base):
    def forward(self, x, t):
        h = self.proj(x)
        tokens = (h * 1.0).detach()  # dispatched without a gradient, as ERNIE's MoE does
        out = Unpermute.apply(tokens, h)
        return out + tokens * tokens


class ModelUnpermuteFed(_Base):
    """The tokens are the model's input `t` (stop_gradient True), as its caller fed them."""

    def forward(self, x, t):
        return Unpermute.apply(t, self.proj(x))


class ModelSplitGate(_Base):
    def forward(self, x, t):
        return SplitGate.apply(paddle.concat([self.proj(x), x], axis=-1))


def STATE():
    return {"calls": InitOnceQuant.calls, "scale": InitOnceQuant.scale, "initialized": InitOnceQuant.initialized,
            "tokens": dict(EXPERT_TOKENS), "log": list(CALL_LOG), "clip": CONFIG["clip"],
            "router": [ROUTER_STATS.calls, ROUTER_STATS.tokens]}
