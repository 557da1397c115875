"""Forward returns two tensors; backward takes two gradients.

(Model returns `c * 0.5`, not `c`: paddle 2.6.2 to_static drops the gradient of an output
that is also used inside the function, for any op - not a PyLayer matter.)
"""
import paddle
from paddle.autograd import PyLayer


class SinCos(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.sin(x), paddle.cos(x)

    @staticmethod
    def backward(ctx, dsin, dcos):
        x, = ctx.saved_tensor()
        return dsin * paddle.cos(x) - dcos * paddle.sin(x)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        s, c = SinCos.apply(self.linear(x))
        return s * 2.0 + c, c * 0.5


INPUTS = [([2, 4], "float32", True)]
# paddle 3.3.1's predictor with oneDNN (its default CPU configuration) gives wrong outputs for
# this model written with built-in ops too (tests/e2e/test_predictor_onednn.py): run without.
PREDICTOR_ONEDNN_OFF = "paddle 3.3.1 oneDNN kernels, wrong outputs on AVX2 (test_predictor_onednn.py)"
