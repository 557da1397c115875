"""A top-k MoE gate with ctx flags: indices and dispatch mask marked non-differentiable,
set_materialize_grads(False) (backward sees None for an unused aux loss), non-tensor settings
saved on ctx; outputs mix float, int64 and non-differentiable tensors.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class TopKGate(PyLayer):
    @staticmethod
    def forward(ctx, logits, k=2):
        num_experts = logits.shape[-1]
        probs = F.softmax(logits, axis=-1)
        _, top_idx = paddle.topk(probs, k, axis=-1)
        mask = paddle.sum(F.one_hot(top_idx, num_experts), axis=1)
        denom = paddle.sum(probs * mask, axis=-1, keepdim=True)
        combine = probs * mask / denom
        # load-balancing loss: num_experts * sum_e(fraction routed to e * mean prob of e)
        fraction = paddle.mean(mask, axis=0) / k
        aux_loss = num_experts * paddle.sum(fraction * paddle.mean(probs, axis=0))
        ctx.mark_non_differentiable(top_idx, mask)
        ctx.set_materialize_grads(False)
        ctx.k = k
        ctx.num_experts = num_experts
        ctx.save_for_backward(probs, mask, denom, combine, fraction)
        return combine, top_idx, mask, aux_loss

    @staticmethod
    def backward(ctx, grad_combine, grad_idx, grad_mask, grad_aux):
        probs, mask, denom, combine, fraction = ctx.saved_tensor()
        grad_probs = paddle.zeros_like(probs)
        if grad_combine is not None:
            inner = paddle.sum(grad_combine * combine, axis=-1, keepdim=True)
            grad_probs = grad_probs + mask * (grad_combine - inner) / denom
        if grad_aux is not None:
            num_tokens = paddle.cast(paddle.shape(probs)[0], probs.dtype)
            per_token = ctx.num_experts * fraction / num_tokens
            grad_probs = grad_probs + grad_aux * paddle.expand_as(per_token.unsqueeze(0), probs)
        return probs * (grad_probs - paddle.sum(grad_probs * probs, axis=-1, keepdim=True))


class MoELayer(paddle.nn.Layer):
    def __init__(self, hidden=4, num_experts=3, k=2):
        super().__init__()
        self.gate = paddle.nn.Linear(hidden, num_experts)
        self.experts = paddle.nn.LayerList([paddle.nn.Linear(hidden, hidden) for _ in range(num_experts)])
        self.k = k

    def forward(self, x):
        combine, top_idx, mask, aux_loss = TopKGate.apply(self.gate(x), k=self.k)
        outs = paddle.stack([expert(x) for expert in self.experts], axis=1)  # [T, E, h]
        return paddle.sum(outs * combine.unsqueeze(-1), axis=1), top_idx, mask, aux_loss


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.moe1 = MoELayer()
        self.moe2 = MoELayer(k=1)

    def forward(self, x):
        h, idx, mask, aux = self.moe1(x)
        out, _idx2, _mask2, _aux2 = self.moe2(paddle.tanh(h))  # aux loss unused
        return out, aux * 0.01, idx, mask


INPUTS = [([5, 4], "float32", True)]
