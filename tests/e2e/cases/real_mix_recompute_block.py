"""Mix: a checkpointed MLP whose recomputed function applies PyLayers itself (Swish, a
c_identity-style grad scaler), between sequence-parallel scatter/gather ops; backward re-runs
it under paddle.enable_grad and differentiates through the inner PyLayers with paddle.grad.
"""
import paddle
from paddle.autograd import PyLayer


class ScatterOp(PyLayer):
    @staticmethod
    def forward(ctx, input, nranks=1, rank=0):
        ctx.nranks = nranks
        return paddle.split(input, nranks, axis=0)[rank]

    @staticmethod
    def backward(ctx, grad):
        return paddle.concat([grad] * ctx.nranks, axis=0)


class GatherOp(PyLayer):
    @staticmethod
    def forward(ctx, input, nranks=1, rank=0):
        ctx.nranks, ctx.rank = nranks, rank
        return paddle.concat([input] * nranks, axis=0)

    @staticmethod
    def backward(ctx, grad):
        return paddle.split(grad, ctx.nranks, axis=0)[ctx.rank]


class Swish(PyLayer):
    @staticmethod
    def forward(ctx, x, beta=1.0):
        s = paddle.nn.functional.sigmoid(beta * x)
        ctx.beta = beta
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, s = ctx.saved_tensor()
        return grad * (s + ctx.beta * x * s * (1.0 - s))


class GradScale(PyLayer):
    """Identity forward; backward scales (the 1/world-size of an averaged all-reduce)."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return paddle.assign(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale


class CheckpointFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, length, *args):
        ctx.run_function = run_function
        ctx.length = length
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


class CheckpointedMLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 4)

    def _run(self, x):
        h = Swish.apply(self.fc1(x), beta=1.5)
        return x + self.fc2(GradScale.apply(h, 0.5))

    def forward(self, x):
        params = list(self.parameters())
        return CheckpointFunction.apply(self._run, 1, x, *params)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.mlp = CheckpointedMLP()

    def forward(self, x):
        x = paddle.transpose(x, [1, 0, 2])
        shard = ScatterOp.apply(x)
        out = GatherOp.apply(self.mlp(shard))
        return paddle.transpose(out, [1, 0, 2])


INPUTS = [([2, 3, 4], "float32", True)]
