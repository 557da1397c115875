"""Learnable-scale quantizers with straight-through estimators: LSQ (weight, learnable step
size with a gradient scale and Qn/Qp bounds as non-tensor arguments saved on ctx) and PACT
(activation, learnable clipping level); both return gradients for the input and the scale,
computed from the tensors and masks saved in forward.
"""
import paddle
from paddle.autograd import PyLayer


class LsqQuant(PyLayer):
    @staticmethod
    def forward(ctx, weight, alpha, g, Qn, Qp):
        ctx.save_for_backward(weight, alpha)
        ctx.other = g, Qn, Qp
        w_q = paddle.round(paddle.clip(weight / alpha, Qn, Qp)) * alpha
        return w_q

    @staticmethod
    def backward(ctx, grad_weight):
        weight, alpha = ctx.saved_tensor()
        g, Qn, Qp = ctx.other
        q_w = weight / alpha
        smaller = paddle.cast(q_w < Qn, weight.dtype)
        bigger = paddle.cast(q_w > Qp, weight.dtype)
        between = 1.0 - smaller - bigger
        grad_alpha = (smaller * Qn + bigger * Qp + between * (paddle.round(q_w) - q_w)) * grad_weight * g
        grad_alpha = paddle.sum(grad_alpha).reshape([1])
        grad_weight = between * grad_weight
        return grad_weight, grad_alpha


class PactQuant(PyLayer):
    @staticmethod
    def forward(ctx, x, alpha, bits=8):
        levels = float(2**bits - 1)
        clipped = paddle.minimum(paddle.nn.functional.relu(x), alpha)
        inside = paddle.cast((x >= 0) & (x <= alpha), x.dtype)
        above = paddle.cast(x > alpha, x.dtype)
        ctx.save_for_backward(inside, above)
        return paddle.round(clipped * levels / alpha) * alpha / levels

    @staticmethod
    def backward(ctx, grad):
        inside, above = ctx.saved_tensor()
        return grad * inside, paddle.sum(grad * above).reshape([1])


class LsqLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features, bits=4):
        super().__init__()
        self.weight = self.create_parameter([in_features, out_features])
        self.bias = self.create_parameter([out_features], is_bias=True)
        self.Qn = -(2 ** (bits - 1))
        self.Qp = 2 ** (bits - 1) - 1
        self.step = self.create_parameter([1], default_initializer=paddle.nn.initializer.Constant(0.1))
        self.pact_alpha = self.create_parameter([1], default_initializer=paddle.nn.initializer.Constant(1.0))
        self.grad_scale = 1.0 / (in_features * out_features * self.Qp) ** 0.5

    def forward(self, x):
        x = PactQuant.apply(x, self.pact_alpha, bits=4)
        w = LsqQuant.apply(self.weight, self.step, self.grad_scale, self.Qn, self.Qp)
        return paddle.matmul(x, w) + self.bias


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = LsqLinear(4, 6)
        self.fc2 = LsqLinear(6, 3, bits=8)

    def forward(self, x):
        return self.fc2(self.fc1(x) * 2.0)


INPUTS = [([5, 4], "float32", True)]
