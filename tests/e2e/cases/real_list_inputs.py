"""A list of tensors as input, some stop_gradient: a fused embedding sum + layer norm over a
list of embeddings (the position embedding comes from a frozen table, so it needs no
gradient) with a list of non-tensor weights; forward records which list items need a
gradient and backward returns a list with None for the others.
"""
import paddle
from paddle.autograd import PyLayer


class FusedEmbeddingSum(PyLayer):
    @staticmethod
    def forward(ctx, embeddings, weights, epsilon=1e-5):
        ctx.weights = weights
        ctx.needs_grad = [not e.stop_gradient for e in embeddings]
        total = embeddings[0] * weights[0]
        for emb, w in zip(embeddings[1:], weights[1:]):
            total = total + emb * w
        mean = paddle.mean(total, axis=-1, keepdim=True)
        centered = total - mean
        inv_std = paddle.rsqrt(paddle.mean(centered * centered, axis=-1, keepdim=True) + epsilon)
        normed = centered * inv_std
        ctx.save_for_backward(normed, inv_std)
        return normed

    @staticmethod
    def backward(ctx, grad):
        normed, inv_std = ctx.saved_tensor()
        mean_grad = paddle.mean(grad, axis=-1, keepdim=True)
        mean_gn = paddle.mean(grad * normed, axis=-1, keepdim=True)
        grad_total = (grad - mean_grad - normed * mean_gn) * inv_std
        return [grad_total * w if needs else None for w, needs in zip(ctx.weights, ctx.needs_grad)]


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.word = paddle.nn.Linear(5, 4)
        self.position = paddle.nn.Embedding(6, 4)
        self.position.weight.stop_gradient = True  # frozen sinusoidal-like table
        self.token_type = paddle.nn.Linear(2, 4, bias_attr=False)
        self.out = paddle.nn.Linear(4, 3)

    def forward(self, tokens, types):
        positions = paddle.arange(paddle.shape(tokens)[0], dtype="int64")
        embs = [self.word(tokens), self.position(positions), self.token_type(types)]
        return self.out(FusedEmbeddingSum.apply(embs, [1.0, 1.0, 0.5]))


INPUTS = [([6, 5], "float32", True), ([6, 2], "float32", False)]
# paddle 2.6.2's eager PyLayer mishandles tensors inside list arguments (see list_input.py:
# the gradient of the list's first tensor goes to its last leaf tensor, the others get none),
# so there is no eager reference for gradients: on 2.6 only the eager call itself and the
# exported forward are compared.
MODES_2_6 = ("eager", "jit_save")
