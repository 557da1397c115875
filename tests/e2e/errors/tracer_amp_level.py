"""Paddle's RecomputeFunction style: forward reads the dygraph tracer's AMP state
(`framework._dygraph_tracer()._amp_level`), which a static graph does not have: refused at
the user's line, saying what to do, instead of an AttributeError on None."""
import paddle
from paddle import framework
from paddle.autograd import PyLayer
from paddle.framework import core


class RecomputeFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, x):
        ctx.run_function = run_function
        tracer = framework._dygraph_tracer()
        ctx.is_fw_autocast = False if tracer._amp_level == core.AmpLevel.O0 else True
        ctx.save_for_backward(x)
        with paddle.no_grad():
            return run_function(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensor()
        x = x.detach()
        x.stop_gradient = False
        with paddle.enable_grad(), paddle.amp.auto_cast(enable=ctx.is_fw_autocast):
            out = ctx.run_function(x)
        return paddle.grad([out], [x], [grad])[0]


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x):
        return RecomputeFunction.apply(paddle.tanh, self.fc(x))


INPUTS = [([2, 4], "float32", True)]
