"""Tensors picked out of mixed arguments with `isinstance(o, paddle.Tensor)` (PaddleNLP's
`_NoopSaveInputs` style): forward gets tensors and Python weights interleaved in `*inputs`,
keeps the weights on ctx and mixes the tensors. In a static graph the values are no
`paddle.Tensor`; inside forward/backward the runtime makes the check answer as in eager
(eager_only.py).
"""
import paddle
from paddle.autograd import PyLayer


class WeightedMerge(PyLayer):
    @staticmethod
    def forward(ctx, *inputs):
        tensors = [o for o in inputs if isinstance(o, paddle.Tensor)]
        weights = [o for o in inputs if not isinstance(o, paddle.Tensor)]
        ctx.weights = weights
        ctx.save_for_backward(*tensors)
        out = tensors[0] * weights[0]
        for tensor, weight in zip(tensors[1:], weights[1:]):
            out = out + tensor * weight
        return out

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensor()
        assert all(isinstance(t, paddle.Tensor) for t in saved)
        return tuple(grad * weight for weight in ctx.weights)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.left = paddle.nn.Linear(4, 4)
        self.right = paddle.nn.Linear(4, 4)

    def forward(self, x):
        return WeightedMerge.apply(self.left(x), 0.5, self.right(x), 2.0)


INPUTS = [([3, 4], "float32", True)]
