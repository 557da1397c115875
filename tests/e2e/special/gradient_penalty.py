"""Double backward in training, written as public code writes it: a WGAN-GP critic whose
activation is a PyLayer (the gradient penalty differentiates the critic's input gradient
again) and a PINN whose first layer's activation is a PyLayer (the loss holds u_xx, and
training differentiates that once more). Each backward is made of differentiable ops and
reads what it saved from forward's input (Swish) or output (Tanh). `SwishSavingSigmoid`
saves a tensor forward computes and does not return, which a static graph cannot
differentiate through: its double backward is refused, naming it."""
import math

import numpy as np
import paddle
from paddle.autograd import PyLayer


def input_gradient(y, x):
    """d(sum y)/dx, itself differentiable."""
    if paddle.in_dynamic_mode() or paddle.base.dygraph.base.in_to_static_mode():
        return paddle.grad([y.sum()], [x], create_graph=True)[0]
    return paddle.static.gradients([y.sum()], [x])[0]  # pure static programs


class Swish(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * paddle.nn.functional.sigmoid(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        s = paddle.nn.functional.sigmoid(x)
        return dy * (s + x * s * (1.0 - s))


class Tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1.0 - y * y)


class SwishSavingSigmoid(PyLayer):
    @staticmethod
    def forward(ctx, x):
        s = paddle.nn.functional.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensor()
        return dy * (s + x * s * (1.0 - s))


class Critic(paddle.nn.Layer):
    def __init__(self, activation=Swish):
        super().__init__()
        self.activation = activation
        self.fc1 = paddle.nn.Linear(4, 16)
        self.fc2 = paddle.nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(self.activation.apply(self.fc1(x)))


class CriticLoss(paddle.nn.Layer):
    """WGAN-GP: the critic's Wasserstein estimate plus 10 * (|d critic / d mixed| - 1)^2."""

    def __init__(self, activation=Swish):
        super().__init__()
        self.critic = Critic(activation)

    def forward(self, real, fake, alpha):
        mixed = alpha * real + (1.0 - alpha) * fake
        mixed.stop_gradient = False
        grad = input_gradient(self.critic(mixed), mixed)
        penalty = ((paddle.sqrt((grad * grad).sum(axis=1) + 1e-12) - 1.0) ** 2).mean()
        return self.critic(fake).mean() - self.critic(real).mean() + 10.0 * penalty


class PoissonLoss(paddle.nn.Layer):
    """PINN for u'' = -pi^2 sin(pi x) on [0, 1], u(0) = u(1) = 0."""

    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(1, 16)
        self.fc2 = paddle.nn.Linear(16, 16)
        self.fc3 = paddle.nn.Linear(16, 1)

    def u(self, x):
        return self.fc3(paddle.tanh(self.fc2(Tanh.apply(self.fc1(x)))))

    def forward(self, points, edges):
        x = points * 1.0
        x.stop_gradient = False
        u_xx = input_gradient(input_gradient(self.u(x), x), x)
        residual = u_xx + math.pi ** 2 * paddle.sin(math.pi * x)
        return (residual * residual).mean() + (self.u(edges) ** 2).mean()


def critic_inputs(rng):
    return [rng.standard_normal([8, 4]).astype("float32") + 1.0,
            rng.standard_normal([8, 4]).astype("float32"),
            rng.uniform(size=[8, 1]).astype("float32")]


def poisson_inputs(rng):
    return [rng.uniform(size=[16, 1]).astype("float32"), np.array([[0.0], [1.0]], "float32")]
