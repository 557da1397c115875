"""Mix: a LoRA step through four chained PyLayers: quick-LoRA (frozen weight and bias passed
as keywords out of signature order, three grads for five tensors), PACT quantizer, fused
RMSNorm with `*residuals`/keyword-only/`**options`, fused cross-entropy with int64 labels.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class QuickLora(PyLayer):
    @staticmethod
    def forward(ctx, input, lora_A, lora_B, weight, bias=None, scaling=1.0):
        merged = weight + scaling * paddle.matmul(lora_A, lora_B)
        ctx.scaling = scaling
        ctx.save_for_backward(input, weight, lora_A, lora_B)
        out = paddle.matmul(input, merged)
        return out if bias is None else out + bias

    @staticmethod
    def backward(ctx, grad):
        input, weight, lora_A, lora_B = ctx.saved_tensor()
        merged = weight + ctx.scaling * paddle.matmul(lora_A, lora_B)
        grad_input = paddle.matmul(grad, merged, transpose_y=True)
        merged_grad = paddle.matmul(input.reshape([-1, input.shape[-1]]), grad.reshape([-1, grad.shape[-1]]),
                                    transpose_x=True)
        return (grad_input, ctx.scaling * paddle.matmul(merged_grad, lora_B, transpose_y=True),
                ctx.scaling * paddle.matmul(lora_A, merged_grad, transpose_x=True))


class PactQuant(PyLayer):
    @staticmethod
    def forward(ctx, x, alpha, bits=8):
        levels = float(2**bits - 1)
        inside = paddle.cast((x >= 0) & (x <= alpha), x.dtype)
        above = paddle.cast(x > alpha, x.dtype)
        ctx.save_for_backward(inside, above)
        clipped = paddle.minimum(F.relu(x), alpha)
        return paddle.round(clipped * levels / alpha) * alpha / levels

    @staticmethod
    def backward(ctx, grad):
        inside, above = ctx.saved_tensor()
        return grad * inside, paddle.sum(grad * above).reshape([1])


class FusedAddRMSNorm(PyLayer):
    @staticmethod
    def forward(ctx, hidden, *residuals, scale, **options):
        summed = hidden * scale
        for r in residuals:
            summed = summed + r
        rms = paddle.rsqrt(paddle.mean(summed * summed, axis=-1, keepdim=True) + options.get("epsilon", 1e-6))
        normed = summed * rms
        ctx.scale, ctx.count = scale, len(residuals)
        ctx.save_for_backward(normed, rms, options["weight"])
        return normed * options["weight"]

    @staticmethod
    def backward(ctx, grad):
        normed, rms, weight = ctx.saved_tensor()
        gn = grad * weight
        g = (gn - normed * paddle.mean(gn * normed, axis=-1, keepdim=True)) * rms
        grad_weight = paddle.sum(grad * normed, axis=list(range(len(grad.shape) - 1)))
        return (g * ctx.scale,) + (g,) * ctx.count + (grad_weight,)


class FusedSoftmaxCrossEntropy(PyLayer):
    @staticmethod
    def forward(ctx, logits, labels, ignore_index=-100):
        softmax = F.softmax(logits, axis=-1)
        valid = labels != ignore_index
        one_hot = F.one_hot(paddle.where(valid, labels, paddle.zeros_like(labels)), logits.shape[-1])
        valid_f = paddle.cast(valid, logits.dtype)
        loss = -paddle.sum(F.log_softmax(logits, axis=-1) * one_hot, axis=-1) * valid_f
        ctx.save_for_backward((softmax - one_hot) * valid_f.unsqueeze(-1))
        ctx.mark_non_differentiable(softmax)
        return loss, softmax

    @staticmethod
    def backward(ctx, grad_loss, _grad_softmax):
        (grad_logits,) = ctx.saved_tensor()
        return grad_logits * grad_loss.unsqueeze(-1), None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.base = paddle.nn.Linear(4, 6)
        self.base.weight.stop_gradient = True
        self.base.bias.stop_gradient = True
        self.lora_A = self.create_parameter([4, 2])
        self.lora_B = self.create_parameter([2, 6], default_initializer=paddle.nn.initializer.Normal(std=0.1))
        self.alpha = self.create_parameter([1], default_initializer=paddle.nn.initializer.Constant(1.0))
        self.norm_weight = self.create_parameter([6], default_initializer=paddle.nn.initializer.Constant(1.0))
        self.head = paddle.nn.Linear(6, 5)

    def forward(self, x, targets):
        h = QuickLora.apply(x, self.lora_A, self.lora_B, scaling=2.0, bias=self.base.bias, weight=self.base.weight)
        q = PactQuant.apply(h, self.alpha, bits=4)
        n = FusedAddRMSNorm.apply(q, h, scale=0.5, weight=self.norm_weight, epsilon=1e-5)
        labels = paddle.argmax(targets, axis=-1)
        loss, probs = FusedSoftmaxCrossEntropy.apply(self.head(n), ignore_index=3, labels=labels)
        return loss, probs


INPUTS = [([2, 3, 4], "float32", True), ([2, 3, 5], "float32", False)]
