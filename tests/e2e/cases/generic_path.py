"""No builder: a PyLayer class made inside a function, an alias of .apply, import-time calls."""
import paddle
from paddle.autograd import PyLayer


def make_cube_plus():
    class Cube(PyLayer):
        @staticmethod
        def forward(ctx, x, offset=0.5):
            ctx.save_for_backward(x)
            return x * x * x + offset

        @staticmethod
        def backward(ctx, dy):
            x, = ctx.saved_tensor()
            return dy * 3.0 * x * x

    def cube_plus(x, offset):
        return Cube.apply(x, offset=offset)

    return cube_plus


cube_plus = make_cube_plus()


class Double(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


double = Double.apply
AT_IMPORT = double(paddle.ones([2])).numpy().tolist()


def doubled_sum(x):
    return paddle.sum(Double.apply(x))


# A static graph built at import time, before the builders are registered.
AT_IMPORT_STATIC = float(paddle.jit.to_static(doubled_sum, full_graph=True)(paddle.ones([2, 3])))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return double(cube_plus(self.linear(x), AT_IMPORT[0])) * (AT_IMPORT_STATIC / 12.0)


INPUTS = [([2, 4], "float32", True)]
# paddle 2.6.2's dy2static conversion loses a converted closure's free variables
# (NameError on `Cube`, for any closure, PyLayer or not): on 2.6 the AST paths are not run.
MODES_2_6 = ("eager", "sot", "static")

