"""Fused linear + cross-entropy that chunks the sequence (non-tensor chunk size): forward
computes each chunk's logits, loss and the gradients of hidden states, weight and bias and
saves them; the loss is a scalar mean, backward only scales the saved gradients.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class FusedLinearCrossEntropy(PyLayer):
    @staticmethod
    def forward(ctx, hidden, weight, bias, labels, chunk_size=2):
        seq_len = hidden.shape[1]
        vocab = weight.shape[1]
        n_tokens = paddle.cast(paddle.numel(labels), hidden.dtype)
        losses, grad_hidden_chunks = [], []
        grad_weight = paddle.zeros_like(weight)
        grad_bias = paddle.zeros_like(bias)
        for start in range(0, seq_len, chunk_size):
            end = min(start + chunk_size, seq_len)
            h = hidden[:, start:end]
            logits = paddle.matmul(h, weight) + bias
            log_probs = F.log_softmax(logits, axis=-1)
            one_hot = F.one_hot(labels[:, start:end], vocab)
            losses.append(-paddle.sum(log_probs * one_hot, axis=-1))
            grad_logits = (paddle.exp(log_probs) - one_hot) / n_tokens
            grad_hidden_chunks.append(paddle.matmul(grad_logits, weight, transpose_y=True))
            h_2d = h.reshape([-1, h.shape[-1]])
            g_2d = grad_logits.reshape([-1, vocab])
            grad_weight = grad_weight + paddle.matmul(h_2d, g_2d, transpose_x=True)
            grad_bias = grad_bias + paddle.sum(g_2d, axis=0)
        loss = paddle.mean(paddle.concat(losses, axis=1))
        grad_hidden = paddle.concat(grad_hidden_chunks, axis=1)
        ctx.save_for_backward(grad_hidden, grad_weight, grad_bias)
        return loss

    @staticmethod
    def backward(ctx, grad_loss):
        grad_hidden, grad_weight, grad_bias = ctx.saved_tensor()
        return grad_hidden * grad_loss, grad_weight * grad_loss, grad_bias * grad_loss, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = paddle.nn.Linear(4, 6)
        self.lm_head = paddle.nn.Linear(6, 7)

    def forward(self, x, targets):
        hidden = F.gelu(self.body(x))
        labels = paddle.argmax(targets, axis=-1)
        loss = FusedLinearCrossEntropy.apply(hidden, self.lm_head.weight, self.lm_head.bias, labels, chunk_size=2)
        return loss


INPUTS = [([2, 5, 4], "float32", True), ([2, 5, 7], "float32", False)]
