"""Binary straight-through quantizer (PaddleSlim style): forward binarizes with sign,
backward writes zeros into the incoming gradient with a boolean mask where the input is
out of [-1, 1] and returns a clone. On paddle 2.6.2 the write's result is declared in the
global block, and `clone()` of it was put there too, before the gradient existed (legacy.py
`body_semantics`).
"""
import paddle
from paddle.autograd import PyLayer


class BinaryActivationSTE(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensor()
        grad_input = grad_output
        grad_input[paddle.abs(x) > 1.0] = 0
        return grad_input.clone()


class BinaryLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = paddle.nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.fc(BinaryActivationSTE.apply(x))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = paddle.nn.Linear(4, 6)
        self.binary = BinaryLinear(6, 3)

    def forward(self, x):
        return self.binary(self.stem(x) * 2.0)


INPUTS = [([5, 4], "float32", True)]
