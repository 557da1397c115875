"""Decorators on forward/backward besides staticmethod, kept and run: one changes the
values (scales forward's output / backward's gradient), one counts calls; stacked."""
import functools

import paddle
from paddle.autograd import PyLayer

CALLS = {"forward": 0, "backward": 0}


def counted(name):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            CALLS[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def scaled(k):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(ctx, *args):
            out = fn(ctx, *args)
            return out * k

        return wrapper

    return decorate


class Scaled(PyLayer):
    @staticmethod
    @counted("forward")
    @scaled(3.0)
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.tanh(x)

    @staticmethod
    @scaled(0.5)
    @counted("backward")
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        t = paddle.tanh(x)
        return dy * (1.0 - t * t)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return Scaled.apply(self.linear(x))


INPUTS = [([2, 4], "float32", True)]
