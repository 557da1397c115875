"""Mix: a recomputed LoRA block. CheckpointFunction gets the trainable parameters as
`*params` (the frozen base weight stays out) after the input and a stop_gradient bias (None
for it); its run function applies a straight-through
fake quantizer and a LoRA matmul PyLayer whose backward returns None for the frozen weight,
so the re-run under paddle.enable_grad goes through both custom backwards; a non-tensor
scaling rides along.
"""
import paddle
from paddle.autograd import PyLayer


class FakeQuantSTE(PyLayer):
    @staticmethod
    def forward(ctx, x, bits=8):
        bound = float(2 ** (bits - 1) - 1)
        scale = paddle.max(paddle.abs(x)).detach() / bound + 1e-8
        ctx.save_for_backward(paddle.cast(paddle.abs(x) <= scale * bound, x.dtype))
        return paddle.round(x / scale) * scale

    @staticmethod
    def backward(ctx, grad):
        (inside,) = ctx.saved_tensor()
        return grad * inside


class LoRAMatmul(PyLayer):
    @staticmethod
    def forward(ctx, x, weight, lora_a, lora_b, bias, scaling):
        low = paddle.matmul(x, lora_a)
        ctx.save_for_backward(x, weight, lora_a, lora_b, low)
        ctx.scaling = scaling
        return paddle.matmul(x, weight) + scaling * paddle.matmul(low, lora_b) + bias

    @staticmethod
    def backward(ctx, grad):
        x, weight, lora_a, lora_b, low = ctx.saved_tensor()
        grad_low = ctx.scaling * paddle.matmul(grad, lora_b, transpose_y=True)
        grad_x = paddle.matmul(grad, weight, transpose_y=True) + paddle.matmul(grad_low, lora_a, transpose_y=True)
        x2 = x.reshape([-1, x.shape[-1]])
        grad_a = paddle.matmul(x2, grad_low.reshape([-1, grad_low.shape[-1]]), transpose_x=True)
        grad_b = ctx.scaling * paddle.matmul(low.reshape([-1, low.shape[-1]]),
                                             grad.reshape([-1, grad.shape[-1]]), transpose_x=True)
        return grad_x, None, grad_a, grad_b, None


class CheckpointFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, length, *args):
        ctx.run_function, ctx.length = run_function, length
        ctx.save_for_backward(*args)
        with paddle.no_grad():
            return run_function(*args[:length])

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensor()
        inputs = []
        for t in saved[: ctx.length]:
            needs_grad = not t.stop_gradient
            t = t.detach()
            t.stop_gradient = not needs_grad
            inputs.append(t)
        params = list(saved[ctx.length:])
        with paddle.enable_grad():
            out = ctx.run_function(*inputs)
        wanted = [t for t in inputs if not t.stop_gradient] + params
        grads = iter(paddle.grad([out], wanted, [grad]))
        return tuple(None if t.stop_gradient else next(grads) for t in inputs) + tuple(grads)


class LoRABlock(paddle.nn.Layer):
    def __init__(self, features, rank=2):
        super().__init__()
        self.weight = self.create_parameter([features, features])
        self.weight.stop_gradient = True  # frozen pretrained weight
        self.lora_a = self.create_parameter([features, rank])
        self.lora_b = self.create_parameter([rank, features])
        self.gain = self.create_parameter([features], default_initializer=paddle.nn.initializer.Constant(1.0))

    def _run(self, x, bias):
        h = FakeQuantSTE.apply(x * self.gain, bits=4)
        return x + LoRAMatmul.apply(h, self.weight, self.lora_a, self.lora_b, bias, 0.5)

    def forward(self, x, bias):
        params = [p for p in self.parameters() if not p.stop_gradient]
        return CheckpointFunction.apply(self._run, 2, x, bias, *params)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.block1 = LoRABlock(4)
        self.block2 = LoRABlock(4)

    def forward(self, x, bias):
        return self.block2(paddle.nn.functional.relu(self.block1(x, bias)), bias)


INPUTS = [([2, 3, 4], "float32", True), ([4], "float32", False)]
# Outputs near zero come from cancelling terms of magnitude ~6, where one float32 ulp is
# 4.8e-7: static programs sum the matmuls in another order than eager (1-2 ulp apart).
TOLERANCE = (1e-6, 1e-6)
# paddle 2.6.2's inference predictor segfaults while it is created for this export (a
# pylayer op's forward block holding another pylayer op that reads the frozen weight, which
# no global-block op reads); paddle.jit.load of the same export gives eager's outputs.
MODES_2_6 = ("eager", "to_static", "sot", "static", "train")
