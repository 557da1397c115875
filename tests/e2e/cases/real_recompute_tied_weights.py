"""Tied weights under recompute: one parameter passed to two CheckpointFunction calls (each
re-runs its block in backward and returns paddle.grad for it) and used again outside them,
as an output projection tied to an input one; its three gradients add up.
"""
import paddle
from paddle.autograd import PyLayer


class CheckpointFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, length, *args):
        ctx.run_function, ctx.length = run_function, length
        ctx.save_for_backward(*args)
        with paddle.no_grad():
            return run_function(*args[:length])

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensor()
        inputs = [t.detach() for t in saved[: ctx.length]]
        for t in inputs:
            t.stop_gradient = False
        params = list(saved[ctx.length:])
        with paddle.enable_grad():
            out = ctx.run_function(*inputs)
        return tuple(paddle.grad([out], inputs + params, [grad]))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([4, 4])

    def _run(self, x):
        return paddle.tanh(paddle.matmul(x, self.w))

    def forward(self, x):
        h = CheckpointFunction.apply(self._run, 1, x, self.w)
        h = CheckpointFunction.apply(self._run, 1, h, self.w)
        return paddle.matmul(h, self.w, transpose_y=True)


INPUTS = [([3, 4], "float32", True)]
