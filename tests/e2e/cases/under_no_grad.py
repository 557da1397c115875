"""A PyLayer applied under paddle.no_grad() (no gradient flows through that call) next to
one applied normally."""
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


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        with paddle.no_grad():
            frozen = Cube.apply(h)
        return Cube.apply(h) + frozen


INPUTS = [([2, 4], "float32", True)]
# paddle 2.6.2's static graphs ignore `with paddle.no_grad()` for every op (a model with
# plain `h * h * h` in place of the PyLayer gets the same doubled gradient under
# to_static).
MODES_2_6 = ("eager", "sot", "jit_save")
