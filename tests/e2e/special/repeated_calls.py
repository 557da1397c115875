"""PyLayers applied again and again from the same lines, as a transformer stack does: calls
alike are built from the first one's recording (the runtime's replay), calls that differ in
what their bodies read are built again. Per block: a LoRA linear (frozen base weight, its
gradient None), an activation fake quant whose bit width alternates between blocks (an
argument), a residual scaled by a module-level constant and by a factor, one for the first
two blocks and another for the last two (an argument), and an RMSNorm whose epsilon is read
from a module-level dict (mutable: never replayed) and whose forward counts its calls in a
module-level list (a side effect: never replayed either). tests/e2e/test_replay.py builds it
with replay on and off."""
import paddle
from paddle.autograd import PyLayer

RESIDUAL_SCALE = 0.5
NORM_CONFIG = {"eps": 1e-6}
NORM_CALLS = []


class LoRALinear(PyLayer):
    @staticmethod
    def forward(ctx, x, weight, lora_a, lora_b, scale):
        x_a = paddle.matmul(x, lora_a)
        ctx.save_for_backward(x, weight, lora_a, lora_b, x_a)
        ctx.scale = scale
        return paddle.matmul(x, weight) + paddle.matmul(x_a, lora_b) * scale

    @staticmethod
    def backward(ctx, dy):
        x, weight, lora_a, lora_b, x_a = ctx.saved_tensor()
        d_x_a = paddle.matmul(dy, lora_b, transpose_y=True) * ctx.scale
        d_x = paddle.matmul(dy, weight, transpose_y=True) + paddle.matmul(d_x_a, lora_a, transpose_y=True)
        d_a = paddle.matmul(x.reshape([-1, x.shape[-1]]), d_x_a.reshape([-1, lora_a.shape[1]]), transpose_x=True)
        d_b = paddle.matmul(x_a.reshape([-1, lora_b.shape[0]]), dy.reshape([-1, dy.shape[-1]]), transpose_x=True)
        return d_x, None, d_a, d_b * ctx.scale


class FakeQuant(PyLayer):
    @staticmethod
    def forward(ctx, x, bits):
        bound = float((1 << (bits - 1)) - 1)
        scale = paddle.max(paddle.abs(x)).detach() + 1e-8
        return paddle.round(x / scale * bound) / bound * scale

    @staticmethod
    def backward(ctx, dy):
        return dy


class ScaledResidual(PyLayer):
    @staticmethod
    def forward(ctx, x, h, factor):
        ctx.scale = RESIDUAL_SCALE * factor
        return x + h * ctx.scale

    @staticmethod
    def backward(ctx, dy):
        return dy, dy * ctx.scale


class CountedRMSNorm(PyLayer):
    @staticmethod
    def forward(ctx, x):
        NORM_CALLS.append(1)
        rstd = paddle.rsqrt(paddle.mean(x * x, axis=-1, keepdim=True) + NORM_CONFIG["eps"])
        ctx.save_for_backward(x, rstd)
        return x * rstd

    @staticmethod
    def backward(ctx, dy):
        x, rstd = ctx.saved_tensor()
        x_hat = x * rstd
        return rstd * (dy - x_hat * paddle.mean(dy * x_hat, axis=-1, keepdim=True))


class Block(paddle.nn.Layer):
    def __init__(self, width, bits, factor):
        super().__init__()
        self.weight = self.create_parameter([width, width])
        self.weight.stop_gradient = True
        self.lora_a = self.create_parameter([width, 2])
        self.lora_b = self.create_parameter([2, width], default_initializer=paddle.nn.initializer.Constant(0.1))
        self.bits = bits
        self.factor = factor

    def forward(self, x):
        h = LoRALinear.apply(CountedRMSNorm.apply(x), self.weight, self.lora_a, self.lora_b, 2.0)
        return ScaledResidual.apply(x, FakeQuant.apply(h, self.bits), self.factor)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block(8, 8 if i % 2 == 0 else 4, 1.0 if i < 2 else 0.5) for i in range(4)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


INPUTS = [([2, 3, 8], "float32", True)]
