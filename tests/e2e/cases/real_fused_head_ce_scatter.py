"""Fused LM head + cross-entropy (PaddleNLP style) written with in-place APIs whose results
are discarded: per-position losses scattered into a preallocated buffer with
`paddle.scatter_`, the softmax gradient built with `subtract_`/`multiply_`/`divide_`, the
divisor clipped with `clip_`; backward fills `zero_`/`add_`
buffers and `paddle.assign(..., output=)`. In a static graph each of these returns a new
value and leaves its input as it was (the framework's own to_static reads the buffers before
the writes: a loss of 0.0); the runtime follows them (inplace.py).
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class FusedLinearCrossEntropy(PyLayer):
    @staticmethod
    def forward(ctx, hidden_states, lm_head_weight, labels, ignore_index=-100):
        hidden = hidden_states.shape[-1]
        vocab = lm_head_weight.shape[1]
        flat_labels = labels.reshape([-1])
        token_loss = paddle.zeros_like(flat_labels, dtype=hidden_states.dtype)
        logits = paddle.matmul(hidden_states.reshape([-1, hidden]), lm_head_weight)
        log_probs = F.log_softmax(logits, axis=-1)
        valid = paddle.cast(flat_labels != ignore_index, hidden_states.dtype)
        safe = paddle.where(flat_labels != ignore_index, flat_labels, paddle.zeros_like(flat_labels))
        one_hot = F.one_hot(safe, vocab)
        token_weight = paddle.ones_like(valid)
        token_weight.multiply_(valid)
        nll = -paddle.sum(log_probs * one_hot, axis=-1) * token_weight
        paddle.scatter_(token_loss, paddle.arange(flat_labels.shape[0]), nll)
        divisor = paddle.sum(valid)
        divisor.clip_(min=1.0)
        grad_logits = paddle.exp(log_probs)
        grad_logits.subtract_(one_hot)
        grad_logits.multiply_(paddle.cast((flat_labels != ignore_index).unsqueeze(-1), hidden_states.dtype))
        grad_logits.divide_(divisor)
        ctx.save_for_backward(hidden_states, lm_head_weight, grad_logits)
        return paddle.sum(token_loss) / divisor

    @staticmethod
    def backward(ctx, grad_loss):
        hidden_states, lm_head_weight, grad_logits = ctx.saved_tensor()
        hidden = hidden_states.shape[-1]
        grad_hidden_states = paddle.empty_like(hidden_states.reshape([-1, hidden]))
        grad_hidden_states.zero_()
        grad_hidden_states.add_(paddle.matmul(grad_logits, lm_head_weight, transpose_y=True))
        grad_hidden_states.multiply_(grad_loss)
        grad_lm_head_weight = paddle.zeros_like(lm_head_weight)
        paddle.assign(
            paddle.matmul(hidden_states.reshape([-1, hidden]), grad_logits, transpose_x=True),
            output=grad_lm_head_weight)
        return grad_hidden_states.reshape(hidden_states.shape), grad_lm_head_weight * grad_loss, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = paddle.nn.Linear(4, 6)
        self.lm_head_weight = self.create_parameter([6, 7])

    def forward(self, x, targets):
        hidden = paddle.tanh(self.body(x))
        labels = paddle.argmax(targets, axis=-1)
        labels = paddle.where(targets[:, :, 0] > 1.0, paddle.full_like(labels, -100), labels)
        return FusedLinearCrossEntropy.apply(hidden, self.lm_head_weight, labels)


INPUTS = [([2, 5, 4], "float32", True), ([2, 5, 7], "float32", False)]
