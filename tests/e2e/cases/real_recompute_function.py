"""Gradient checkpointing as a PyLayer (CheckpointFunction of diffusion-model code):
forward(ctx, run_function, length, *args) runs under no_grad; backward re-runs it under
paddle.enable_grad and returns paddle.grad for the inputs and the parameters after them.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class CheckpointFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, length, *args):
        ctx.run_function = run_function
        ctx.length = length
        ctx.save_for_backward(*args)
        with paddle.no_grad():
            output = run_function(*args[:length])
        return output

    @staticmethod
    def backward(ctx, output_grad):
        saved = ctx.saved_tensor()
        inputs = []
        for t in saved[: ctx.length]:
            t = t.detach()
            t.stop_gradient = False
            inputs.append(t)
        params = list(saved[ctx.length:])
        with paddle.enable_grad():
            output = ctx.run_function(*inputs)
        grads = paddle.grad([output], inputs + params, [output_grad], allow_unused=True)
        return tuple(grads)


def checkpoint(func, inputs, params, flag):
    if flag:
        args = tuple(inputs) + tuple(params)
        return CheckpointFunction.apply(func, len(inputs), *args)
    return func(*inputs)


class ResBlock(paddle.nn.Layer):
    def __init__(self, channels, use_checkpoint=True):
        super().__init__()
        self.in_layers = paddle.nn.Linear(channels, channels)
        self.emb_layers = paddle.nn.Linear(3, channels)
        self.out_layers = paddle.nn.Linear(channels, channels)
        self.use_checkpoint = use_checkpoint

    def forward(self, x, emb):
        return checkpoint(self._forward, (x, emb), self.parameters(), self.use_checkpoint)

    def _forward(self, x, emb):
        h = F.silu(self.in_layers(x))
        h = h + self.emb_layers(emb)
        return x + self.out_layers(F.silu(h))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.block1 = ResBlock(4)
        self.block2 = ResBlock(4)

    def forward(self, x, emb):
        return self.block2(self.block1(x, emb), emb)


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", True)]
