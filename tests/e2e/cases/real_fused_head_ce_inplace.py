"""Fused LM head + cross-entropy (PaddleNLP style) with in-place writes: forward fills
preallocated loss and gradient buffers chunk by chunk (`buf[:, i:j] = ...`, `+=`), honours
ignore_index and returns the mean loss; backward scales the saved gradients.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class FusedHeadAndCrossEntropy(PyLayer):
    @staticmethod
    def forward(ctx, hidden_states, lm_head_weight, labels, loss_chunk_size=2, ignore_index=-100):
        seq_len = hidden_states.shape[1]
        vocab = lm_head_weight.shape[1]
        divisor = paddle.sum(paddle.cast(labels != ignore_index, hidden_states.dtype))
        divisor = paddle.clip(divisor, min=1.0)
        token_loss = paddle.zeros_like(labels, dtype=hidden_states.dtype)
        grad_hidden_states = paddle.zeros_like(hidden_states)
        grad_lm_head_weight = paddle.zeros_like(lm_head_weight)
        for start in range(0, seq_len, loss_chunk_size):
            end = min(start + loss_chunk_size, seq_len)
            hidden_chunk = hidden_states[:, start:end]
            labels_chunk = labels[:, start:end]
            valid = paddle.cast(labels_chunk != ignore_index, hidden_states.dtype)
            safe = paddle.where(labels_chunk != ignore_index, labels_chunk, paddle.zeros_like(labels_chunk))
            logits = paddle.matmul(hidden_chunk, lm_head_weight)
            log_probs = F.log_softmax(logits, axis=-1)
            one_hot = F.one_hot(safe, vocab)
            token_loss[:, start:end] = -paddle.sum(log_probs * one_hot, axis=-1) * valid
            grad_logits = (paddle.exp(log_probs) - one_hot) * valid.unsqueeze(-1) / divisor
            grad_hidden_states[:, start:end] = paddle.matmul(grad_logits, lm_head_weight, transpose_y=True)
            grad_lm_head_weight += paddle.matmul(
                hidden_chunk.reshape([-1, hidden_chunk.shape[-1]]), grad_logits.reshape([-1, vocab]),
                transpose_x=True)
        ctx.save_for_backward(grad_hidden_states, grad_lm_head_weight)
        return paddle.sum(token_loss) / divisor

    @staticmethod
    def backward(ctx, grad_loss):
        grad_hidden_states, grad_lm_head_weight = ctx.saved_tensor()
        return grad_hidden_states * grad_loss, grad_lm_head_weight * grad_loss, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = paddle.nn.Linear(4, 6)
        self.lm_head_weight = self.create_parameter([6, 7])

    def forward(self, x, targets):
        hidden = paddle.tanh(self.body(x))
        labels = paddle.argmax(targets, axis=-1)
        labels = paddle.where(targets[:, :, 0] > 1.0, paddle.full_like(labels, -100), labels)
        return FusedHeadAndCrossEntropy.apply(hidden, self.lm_head_weight, labels, loss_chunk_size=2)


INPUTS = [([2, 5, 4], "float32", True), ([2, 5, 7], "float32", False)]
# paddle 2.6.2: set_value's output is a global-block variable made in a sub-block, which the
# to_static training program does not carry once other programs were built in the process
# ("Tensor holds no memory", loudly), with the framework's own path too (see inplace_writes).
MODES_2_6 = ("eager", "to_static", "sot", "static", "jit_save")
