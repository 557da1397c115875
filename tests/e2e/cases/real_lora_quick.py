"""LoRA linear in the PaddleNLP quick-LoRA style with frozen base weight and bias: backward
returns three gradients for five tensor inputs (eager accepts the trailing frozen ones
missing), and None for an input that is stop_gradient (checked in forward).
"""
import paddle
from paddle.autograd import PyLayer


class QuickLora(PyLayer):
    @staticmethod
    def forward(ctx, input, lora_A, lora_B, weight, bias=None, scaling=1.0):
        merged_weight = weight + scaling * paddle.matmul(lora_A, lora_B)
        result = paddle.matmul(input, merged_weight)
        if bias is not None:
            result = result + bias
        ctx.scaling = scaling
        ctx.input_needs_grad = not input.stop_gradient
        ctx.save_for_backward(input, weight, lora_A, lora_B)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, lora_A, lora_B = ctx.saved_tensor()
        merged_weight = weight + ctx.scaling * paddle.matmul(lora_A, lora_B)
        input_grad = None
        if ctx.input_needs_grad:
            input_grad = paddle.matmul(grad_output, merged_weight, transpose_y=True)
        input_2d = input.reshape([-1, input.shape[-1]])
        grad_2d = grad_output.reshape([-1, grad_output.shape[-1]])
        merged_grad = paddle.matmul(input_2d, grad_2d, transpose_x=True)
        lora_A_grad = ctx.scaling * paddle.matmul(merged_grad, lora_B, transpose_y=True)
        lora_B_grad = ctx.scaling * paddle.matmul(lora_A, merged_grad, transpose_x=True)
        return input_grad, lora_A_grad, lora_B_grad


class LoRALinear(paddle.nn.Linear):
    def __init__(self, in_features, out_features, r=2, lora_alpha=4):
        super().__init__(in_features, out_features)
        self.weight.stop_gradient = True
        self.bias.stop_gradient = True
        self.lora_A = self.create_parameter(
            [in_features, r], default_initializer=paddle.nn.initializer.KaimingUniform())
        self.lora_B = self.create_parameter(
            [r, out_features], default_initializer=paddle.nn.initializer.Normal(std=0.1))
        self.scaling = lora_alpha / r

    def forward(self, input):
        return QuickLora.apply(input, self.lora_A, self.lora_B, self.weight, self.bias, self.scaling)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = LoRALinear(8, 6)
        self.o_proj = LoRALinear(6, 4, r=3, lora_alpha=6)

    def forward(self, hidden):
        # hidden comes from a frozen embedding: stop_gradient, so q_proj returns no input grad
        return self.o_proj(paddle.nn.functional.silu(self.q_proj(hidden)))


INPUTS = [([2, 3, 8], "float32", False)]
