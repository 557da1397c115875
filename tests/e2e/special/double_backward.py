"""Double backward: the gradient of a gradient through a PyLayer whose backward is made
of differentiable ops (d/dx of backward's dy * 3x^2 is 6x * dy). Eager supports it; static
graphs on paddle 3.x (PIR) too for a transpiled PyLayer (the runtime inlines the gradient's
pylayer op as autodiff builds it); the legacy IR (2.6.2) refuses it, whoever built the op
(see test_double_backward.py)."""
import paddle
from paddle.autograd import PyLayer


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 3.0 * x * x


def second_order(x):
    """(y, dy/dx, d(sum dy/dx)/dx) for y = Cube(x), the first gradient with create_graph."""
    y = Cube.apply(x)
    if paddle.in_dynamic_mode() or paddle.base.dygraph.base.in_to_static_mode():
        (g,) = paddle.grad([paddle.sum(y)], [x], create_graph=True)
        (gg,) = paddle.grad([paddle.sum(g)], [x])
    else:  # paddle.grad is dynamic-only: a pure static program asks for gradients itself
        (g,) = paddle.static.gradients([paddle.sum(y)], [x])
        (gg,) = paddle.static.gradients([paddle.sum(g)], [x])
    return y, g, gg
