"""A recompute PyLayer whose run function captures a tensor in a closure instead of taking
it as an argument. Eager runs it; under to_static on PIR, backward is built on a copy of
the traced program, where the captured tensor does not exist: a PyLayerContractError naming
the class says to pass it to apply (or save it on ctx) instead of a crash at run time.
"""
import paddle
from paddle.autograd import PyLayer


class Recompute(PyLayer):
    @staticmethod
    def forward(ctx, run_function, x):
        ctx.run_function = run_function
        ctx.save_for_backward(x)
        with paddle.no_grad():
            return run_function(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensor()
        x = x.detach()
        x.stop_gradient = False
        with paddle.enable_grad():
            out = ctx.run_function(x)
        return paddle.grad([out], [x], [grad])[0]


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x, mask):
        return Recompute.apply(lambda h: paddle.tanh(self.fc(h)) * mask, x)


INPUTS = [([2, 4], "float32", True), ([2, 4], "float32", False)]
