"""Outputs of several shapes: a fused QKV split whose forward returns a list [q, k, v]
(backward gets one gradient per list item), and an attention whose forward returns a tuple
of the output tensor, None (no softmax returned) and a list of ints (the sequence lengths),
so backward takes a single gradient.

(A tuple holding a list of tensors is left out: eager PyLayer itself crashes on it,
segfault on paddle 3.3.1, "Invalid rank for GradTensorHolder::add()" on 2.6.2.)
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class FusedQKVSplit(PyLayer):
    @staticmethod
    def forward(ctx, qkv, num_heads, head_dim):
        ctx.num_heads = num_heads
        ctx.head_dim = head_dim
        x = paddle.reshape(qkv, [0, 0, 3, num_heads, head_dim])
        x = paddle.transpose(x, [2, 0, 3, 1, 4])  # [3, b, heads, s, d]
        return paddle.unbind(x, axis=0)

    @staticmethod
    def backward(ctx, dq, dk, dv):
        x = paddle.stack([dq, dk, dv], axis=0)
        x = paddle.transpose(x, [1, 3, 0, 2, 4])  # [b, s, 3, heads, d]
        return paddle.reshape(x, [0, 0, 3 * ctx.num_heads * ctx.head_dim])


class CausalAttention(PyLayer):
    @staticmethod
    def forward(ctx, q, k, v, causal=True, return_softmax=False):
        seq_q, seq_k = q.shape[2], k.shape[2]
        scale = q.shape[-1] ** -0.5
        scores = paddle.matmul(q, k, transpose_y=True) * scale
        if causal:
            mask = paddle.triu(paddle.full([seq_q, seq_k], -1e9, q.dtype), diagonal=1)
            scores = scores + mask
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v)
        ctx.scale = scale
        ctx.save_for_backward(q, k, v, probs)
        return out, (probs if return_softmax else None), [seq_q, seq_k]

    @staticmethod
    def backward(ctx, dout):
        q, k, v, probs = ctx.saved_tensor()
        dv = paddle.matmul(probs, dout, transpose_x=True)
        dprobs = paddle.matmul(dout, v, transpose_y=True)
        dscores = probs * (dprobs - paddle.sum(dprobs * probs, axis=-1, keepdim=True))
        dq = paddle.matmul(dscores, k) * ctx.scale
        dk = paddle.matmul(dscores, q, transpose_x=True) * ctx.scale
        return dq, dk, dv


class Attention(paddle.nn.Layer):
    def __init__(self, hidden=4, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden // num_heads
        self.qkv_proj = paddle.nn.Linear(hidden, 3 * hidden)
        self.o_proj = paddle.nn.Linear(hidden, hidden)

    def forward(self, x):
        q, k, v = FusedQKVSplit.apply(self.qkv_proj(x), self.num_heads, self.head_dim)
        out, softmax, (seq_q, seq_k) = CausalAttention.apply(q, k, v, causal=True)
        assert softmax is None and seq_q == seq_k
        out = paddle.reshape(paddle.transpose(out, [0, 2, 1, 3]), [0, 0, self.num_heads * self.head_dim])
        return self.o_proj(out)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = Attention()

    def forward(self, x):
        return x + self.attn(x)


INPUTS = [([2, 3, 4], "float32", True)]
