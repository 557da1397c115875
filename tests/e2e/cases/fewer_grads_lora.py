"""LoRA linear with a frozen base weight and bias (as PaddleNLP's LoRA layers): backward returns
3 gradients for 5 inputs; eager accepts it because the two it leaves out stop gradient."""
import paddle
from paddle.autograd import PyLayer


class LoRALinear(PyLayer):
    @staticmethod
    def forward(ctx, x, lora_a, lora_b, weight, bias, scaling=2.0):
        ctx.save_for_backward(x, lora_a, lora_b, weight)
        ctx.scaling = scaling
        return paddle.matmul(x, weight) + bias + paddle.matmul(paddle.matmul(x, lora_a), lora_b) * scaling

    @staticmethod
    def backward(ctx, dy):
        x, lora_a, lora_b, weight = ctx.saved_tensor()
        s = ctx.scaling
        xa = paddle.matmul(x, lora_a)
        d_lora_b = paddle.matmul(xa, dy * s, transpose_x=True)
        d_xa = paddle.matmul(dy * s, lora_b, transpose_y=True)
        d_lora_a = paddle.matmul(x, d_xa, transpose_x=True)
        dx = paddle.matmul(dy, weight, transpose_y=True) + paddle.matmul(d_xa, lora_a, transpose_y=True)
        return dx, d_lora_a, d_lora_b


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.weight = self.create_parameter([4, 3])
        self.bias = self.create_parameter([3], is_bias=True)
        self.weight.stop_gradient = True
        self.bias.stop_gradient = True
        self.lora_a = self.create_parameter([4, 2])
        self.lora_b = self.create_parameter([2, 3], default_initializer=paddle.nn.initializer.Constant(0.1))

    def forward(self, x):
        return LoRALinear.apply(x, self.lora_a, self.lora_b, self.weight, self.bias, scaling=0.5)


INPUTS = [([2, 4], "float32", True)]
