"""LoRA with a frozen base weight in the middle of the inputs and a trainable bias:
backward returns one gradient per tensor input, None for the frozen weight and for a
stop_gradient additive input; the scaling and a `merged` flag are non-tensor arguments,
and a merged (inference) call skips the low-rank path.
"""
import paddle
from paddle.autograd import PyLayer


class LoRAMatmul(PyLayer):
    @staticmethod
    def forward(ctx, x, weight, bias, lora_A, lora_B, extra, scaling=1.0, merged=False):
        out = paddle.matmul(x, weight) + bias + extra
        if not merged:
            low_rank = paddle.matmul(x, lora_A)
            out = out + scaling * paddle.matmul(low_rank, lora_B)
            ctx.save_for_backward(x, weight, lora_A, lora_B, low_rank)
        else:
            ctx.save_for_backward(x, weight, lora_A, lora_B, None)
        ctx.scaling = scaling
        ctx.merged = merged
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, lora_A, lora_B, low_rank = ctx.saved_tensor()
        grad_x = paddle.matmul(grad, weight, transpose_y=True)
        reduce_axes = list(range(len(grad.shape) - 1))
        grad_bias = paddle.sum(grad, axis=reduce_axes)
        if ctx.merged:
            return grad_x, None, grad_bias, None, None, None
        grad_low = ctx.scaling * paddle.matmul(grad, lora_B, transpose_y=True)
        grad_x = grad_x + paddle.matmul(grad_low, lora_A, transpose_y=True)
        x_2d = x.reshape([-1, x.shape[-1]])
        grad_lora_A = paddle.matmul(x_2d, grad_low.reshape([-1, grad_low.shape[-1]]), transpose_x=True)
        grad_lora_B = ctx.scaling * paddle.matmul(
            low_rank.reshape([-1, low_rank.shape[-1]]), grad.reshape([-1, grad.shape[-1]]), transpose_x=True)
        return grad_x, None, grad_bias, grad_lora_A, grad_lora_B, None


class LoRALinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features, r=2, lora_alpha=2.0, merged=False):
        super().__init__()
        self.weight = self.create_parameter([in_features, out_features])
        self.weight.stop_gradient = True  # frozen pretrained weight
        self.bias = self.create_parameter([out_features], is_bias=True)  # trainable bias
        self.lora_A = self.create_parameter([in_features, r])
        self.lora_B = self.create_parameter([r, out_features])
        self.scaling = lora_alpha / r
        self.merged = merged

    def forward(self, x, extra):
        return LoRAMatmul.apply(x, self.weight, self.bias, self.lora_A, self.lora_B, extra,
                                scaling=self.scaling, merged=self.merged)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = LoRALinear(4, 5)
        self.head = LoRALinear(5, 5, r=1, lora_alpha=4.0)
        self.merged_head = LoRALinear(5, 5, merged=True)

    def forward(self, x, position_bias):
        h = paddle.tanh(self.proj(x, position_bias))
        return self.head(h, position_bias) + self.merged_head(h, position_bias)


INPUTS = [([2, 3, 4], "float32", True), ([2, 3, 5], "float32", False)]
