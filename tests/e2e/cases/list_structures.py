"""Lists and tuples as eager splits them into gradient slots: forward returns a list (one
slot per item), a tuple holding a one-tensor list, a list argument whose second tensor stops
gradient, None/int/str inside the argument list and the outputs; backward returns a list for a
list argument and None where no gradient is needed."""
import paddle
from paddle.autograd import PyLayer


class SplitHeads(PyLayer):
    # PaddlePaddle's own NestedStructurePyLayer shape: a list in, a list out.
    @staticmethod
    def forward(ctx, xs, bias):
        a, b = xs
        ctx.save_for_backward(a, b, bias)
        return [a * 2.0 + bias, a * b, paddle.tanh(bias)]

    @staticmethod
    def backward(ctx, g_first, g_prod, g_tanh):
        a, b, bias = ctx.saved_tensor()
        t = paddle.tanh(bias)
        return [g_first * 2.0 + g_prod * b, g_prod * a], g_first + g_tanh * (1.0 - t * t)


class MixedList(PyLayer):
    # The list holds None, an int and a str beside two tensors; only the tensors are a slot.
    @staticmethod
    def forward(ctx, parts, scale):
        x, missing, power, tag, frozen = parts
        assert missing is None and power == 2 and tag == "sum"
        ctx.save_for_backward(x, frozen)
        ctx.scale = scale
        return x ** power * frozen * scale, None, 3, [x * 0.5], "done"

    @staticmethod
    def backward(ctx, dy, d_half):
        # One gradient per output slot: `dy`, and a list for the one-tensor list.
        x, frozen = ctx.saved_tensor()
        assert isinstance(d_half, list) and len(d_half) == 1
        return [2.0 * x * frozen * ctx.scale * dy + 0.5 * d_half[0], None]


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(4, 3)
        self.b = paddle.nn.Linear(4, 3)

    def forward(self, x, frozen):
        y1, y2 = self.a(x), self.b(x)
        first, prod, t = SplitHeads.apply([y1, y2], y1 * 0.1)
        out, none, three, (half,), done = MixedList.apply([first + prod, None, 2, "sum", frozen], 1.5)
        assert none is None and three == 3 and done == "done"
        return out + t, half


INPUTS = [([2, 4], "float32", True), ([2, 3], "float32", False)]
# paddle 2.6.2's eager PyLayer checks and fills a list argument's gradients by its last
# tensor (here the frozen one: eager 2.6.2 raises "should return None at 0 position"), so
# there is no eager reference on 2.6.
MODES_2_6 = ()
