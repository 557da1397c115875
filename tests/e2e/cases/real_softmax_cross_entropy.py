"""Fused softmax cross entropy that computes the logits' gradient in forward and saves it:
int64 labels with ignore_index (backward returns None for them) and the softmax as a second,
non-differentiable output.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class FusedSoftmaxCrossEntropy(PyLayer):
    @staticmethod
    def forward(ctx, logits, labels, ignore_index=-100):
        num_classes = logits.shape[-1]
        logits_max = paddle.max(logits, axis=-1, keepdim=True)
        shifted = logits - logits_max
        exp_logits = paddle.exp(shifted)
        sum_exp = paddle.sum(exp_logits, axis=-1, keepdim=True)
        softmax = exp_logits / sum_exp

        valid = labels != ignore_index
        safe_labels = paddle.where(valid, labels, paddle.zeros_like(labels))
        one_hot = F.one_hot(safe_labels, num_classes)
        valid_f = paddle.cast(valid, logits.dtype)

        predicted = paddle.sum(shifted * one_hot, axis=-1)
        loss = (paddle.log(sum_exp).squeeze(-1) - predicted) * valid_f

        grad_logits = (softmax - one_hot) * valid_f.unsqueeze(-1)
        ctx.save_for_backward(grad_logits)
        ctx.mark_non_differentiable(softmax)
        return loss, softmax

    @staticmethod
    def backward(ctx, grad_loss, grad_softmax):
        (grad_logits,) = ctx.saved_tensor()
        return grad_logits * grad_loss.unsqueeze(-1), None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lm_head = paddle.nn.Linear(6, 5)

    def forward(self, hidden, target_scores):
        logits = self.lm_head(paddle.tanh(hidden))
        labels = paddle.argmax(target_scores, axis=-1)
        labels = paddle.where(target_scores[:, :, 0] > 1.0, paddle.full_like(labels, -100), labels)
        loss, probs = FusedSoftmaxCrossEntropy.apply(logits, labels)
        return loss, probs


INPUTS = [([2, 3, 6], "float32", True), ([2, 3, 5], "float32", False)]
