"""A PyLayer applied inside paddle.amp.auto_cast (bfloat16, level O1, the mode CPU
supports): the Linear before it runs in bfloat16, the PyLayer's own ops as AMP decides."""
import paddle
from paddle.autograd import PyLayer

# Static programs run bfloat16 through oneDNN, which needs a CPU with AVX-512: elsewhere paddle
# 3.3.1's to_static of a plain Linear under this auto_cast aborts the process (dnnl::error), no
# PyLayer involved. There the case runs with the casts off, the same model otherwise.
AMP = paddle.amp.is_bfloat16_supported()


class Tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1.0 - paddle.square(y))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        with paddle.amp.auto_cast(enable=AMP, level="O1", dtype="bfloat16"):
            h = self.linear(x)
            y = Tanh.apply(h)
        return paddle.cast(y, "float32")


INPUTS = [([2, 4], "float32", True)]
# bfloat16 rounding: paddle 3.3.1's to_static of this model with paddle.tanh in place of
# the PyLayer differs from eager by up to 3.4e-3 too (the same amount: the pylayer op adds
# nothing); 2.6.2's eager auto_cast on CPU does not cast at all (the Linear stays float32).
TOLERANCE = (1e-2, 1e-2)
# paddle 2.6.2's auto_cast (amp/auto_cast.py amp_guard) is @dygraph_only: a pure static
# program cannot enter it (AssertionError "We only support 'amp_guard()' in dynamic graph
# mode"), for any model; to_static converts it and works.
MODES_2_6 = ("eager", "to_static", "sot", "jit_save")
