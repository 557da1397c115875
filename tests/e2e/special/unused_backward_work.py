"""A LoRA linear whose backward computes every input's gradient, as a library writes it not
knowing which inputs train, and returns None for those that stop gradient (eager takes none
there): the input `x` (data) and the frozen base weight. Their gradients' matmuls and the add
are computed and read by nothing; autodiff never builds such work for the built-in ops of
`TwinModel`, the same math. Once inlined, the runtime drops it (pir/unused.py,
legacy/unused.py): the backward program holds the twin's op count
(test_unused_backward_ops.py).
"""
import paddle
from paddle.autograd import PyLayer


class LoRALinearAllGrads(PyLayer):
    @staticmethod
    def forward(ctx, x, weight, lora_a, lora_b):
        x_a = paddle.matmul(x, lora_a)
        ctx.save_for_backward(x, weight, lora_a, lora_b, x_a)
        ctx.frozen = [t.stop_gradient for t in (x, weight, lora_a, lora_b)]
        return paddle.matmul(x, weight) + paddle.matmul(x_a, lora_b)

    @staticmethod
    def backward(ctx, dy):
        x, weight, lora_a, lora_b, x_a = ctx.saved_tensor()
        d_x_a = paddle.matmul(dy, lora_b, transpose_y=True)
        d_x = paddle.matmul(dy, weight, transpose_y=True) + paddle.matmul(d_x_a, lora_a, transpose_y=True)
        d_weight = paddle.matmul(x, dy, transpose_x=True)
        d_a = paddle.matmul(x, d_x_a, transpose_x=True)
        d_b = paddle.matmul(x_a, dy, transpose_x=True)
        return tuple(None if frozen else grad for frozen, grad in zip(ctx.frozen, (d_x, d_weight, d_a, d_b)))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.weight = self.create_parameter([6, 6])
        self.weight.stop_gradient = True
        self.lora_a = self.create_parameter([6, 2])
        self.lora_b = self.create_parameter([2, 6])

    def lora(self, x):
        return LoRALinearAllGrads.apply(x, self.weight, self.lora_a, self.lora_b)

    def forward(self, x):
        return paddle.tanh(self.lora(x))


class TwinModel(Model):
    def lora(self, x):
        return paddle.matmul(x, self.weight) + paddle.matmul(paddle.matmul(x, self.lora_a), self.lora_b)


INPUTS = [([4, 6], "float32", False)]
