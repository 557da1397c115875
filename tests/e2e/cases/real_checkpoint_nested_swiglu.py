"""Selective recompute of LLM MLP blocks: a CheckpointFunction re-runs the up projection and a
fused SwiGLU PyLayer applied last to the tensor the function made (the activation memory
Megatron-style selective recompute drops); backward re-runs it under paddle.enable_grad and
differentiates through the SwiGLU's own backward with paddle.grad, against the gradient from
outside. Two blocks: calls alike, and an export of nested PyLayer ops in several blocks.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class FusedSwiGLU(PyLayer):
    @staticmethod
    def forward(ctx, x):
        gate, up = paddle.chunk(x, 2, axis=-1)
        act = F.silu(gate)
        ctx.save_for_backward(gate, up, act)
        return act * up

    @staticmethod
    def backward(ctx, dy):
        gate, up, act = ctx.saved_tensor()
        sig = F.sigmoid(gate)
        d_gate = dy * up * (sig + act * (1.0 - sig))
        return paddle.concat([d_gate, dy * act], axis=-1)


class CheckpointFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, hidden, *params):
        ctx.run_function = run_function
        ctx.save_for_backward(hidden, *params)
        with paddle.no_grad():
            return run_function(hidden)

    @staticmethod
    def backward(ctx, grad):
        hidden, *params = ctx.saved_tensor()
        hidden = hidden.detach()
        hidden.stop_gradient = False
        with paddle.enable_grad():
            out = ctx.run_function(hidden)
        return tuple(paddle.grad([out], [hidden] + params, [grad], allow_unused=True))


class MLPBlock(paddle.nn.Layer):
    def __init__(self, hidden, inner):
        super().__init__()
        self.up_gate = paddle.nn.Linear(hidden, 2 * inner)
        self.down = paddle.nn.Linear(inner, hidden)

    def _activation(self, hidden):
        return FusedSwiGLU.apply(self.up_gate(hidden))

    def forward(self, hidden):
        act = CheckpointFunction.apply(self._activation, hidden, *self.up_gate.parameters())
        return hidden + self.down(act)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = paddle.nn.LayerList([MLPBlock(8, 16) for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


INPUTS = [([2, 3, 8], "float32", True)]
