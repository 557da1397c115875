"""Decorators on forward/backward in the forms real code uses beyond functools.wraps: a
wrapper without `wraps` (on both), a class-based decorator, and one stacked above
@staticmethod; each changes the values and logs its calls, and runs once per call as in
eager."""
import paddle
from paddle.autograd import PyLayer

LOG = []

def no_wraps(fn):
    def wrapper(ctx, *args):
        LOG.append("nw")
        return fn(ctx, *args) * 2.0
    return wrapper

class Twice:
    def __init__(self, fn):
        self.fn = fn
    def __call__(self, ctx, *args):
        LOG.append("cls")
        return self.fn(ctx, *args) * 2.0

def outer(fn):
    def wrapper(*args):
        LOG.append("outer")
        return fn(*args) * 3.0
    return wrapper

class A(PyLayer):
    @staticmethod
    @no_wraps
    def forward(ctx, x):
        return x * x
    @staticmethod
    @no_wraps
    def backward(ctx, dy):
        return dy

class B(PyLayer):
    @staticmethod
    @Twice
    def forward(ctx, x):
        return x * x
    @staticmethod
    def backward(ctx, dy):
        return dy

class C(PyLayer):
    @outer
    @staticmethod
    def forward(ctx, x):
        return x * x
    @staticmethod
    def backward(ctx, dy):
        return dy * 5.0

class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)
    def forward(self, x):
        h = self.linear(x)
        return A.apply(h), B.apply(h), C.apply(h)

INPUTS = [([2, 4], "float32", True)]
