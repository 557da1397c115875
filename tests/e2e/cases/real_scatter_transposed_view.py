"""Token routing (MoE dispatch style): forward gathers the rows of the chosen tokens, takes
their transpose (`paddle.gather(...).T`, a view in eager) and scatters it in place into a
preallocated buffer with `paddle.scatter_`; backward gathers the gradient back. Reading a
view into an in-place API is what eager does; paddle 2.6.2's to_static refused every view
among an in-place API's arguments ("is a viewed Tensor in dygraph"), though only the written
one can differ from eager (legacy/adapter.py `views_read`).
"""
import paddle
from paddle.autograd import PyLayer


class ScatterTransposed(PyLayer):
    @staticmethod
    def forward(ctx, features, index):
        rows = paddle.gather(features, index, axis=1).T
        out = paddle.zeros([features.shape[1], features.shape[0]], dtype=features.dtype)
        paddle.scatter_(out, index, rows)
        ctx.save_for_backward(index)
        return out

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensor()
        grad_rows = paddle.gather(grad, index)
        return paddle.scatter(paddle.zeros_like(grad), index, grad_rows).T, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 6)

    def forward(self, x):
        hidden = paddle.tanh(self.fc(x))
        index = paddle.to_tensor([4, 0, 2], dtype="int64")
        return ScatterTransposed.apply(hidden, index) * 2.0


INPUTS = [([5, 4], "float32", True)]
