"""In-place writes in forward and backward (as PaddleNLP's fused head + cross-entropy): results
and gradients filled chunk by chunk into `paddle.empty`/`zeros` buffers with `out[i:j] = ...`."""
import paddle
from paddle.autograd import PyLayer

CHUNK = 2


class ChunkedHeadSoftmaxCE(PyLayer):
    @staticmethod
    def forward(ctx, hidden, weight, labels):
        n = hidden.shape[0]
        loss = paddle.zeros([n, 1], dtype=hidden.dtype)
        d_logits = paddle.empty([n, weight.shape[1]], dtype=hidden.dtype)
        for start in range(0, 4, CHUNK):
            h = hidden[start:start + CHUNK]
            logits = paddle.matmul(h, weight)
            prob = paddle.nn.functional.softmax(logits, axis=-1)
            onehot = paddle.nn.functional.one_hot(labels[start:start + CHUNK], weight.shape[1])
            loss[start:start + CHUNK] = -paddle.sum(onehot * paddle.log(prob), axis=-1, keepdim=True)
            d_logits[start:start + CHUNK] = prob - onehot
        ctx.save_for_backward(hidden, weight, d_logits)
        return loss

    @staticmethod
    def backward(ctx, d_loss):
        hidden, weight, d_logits = ctx.saved_tensor()
        d_hidden = paddle.zeros_like(hidden)
        scaled = d_logits * d_loss
        for start in range(0, 4, CHUNK):
            d_hidden[start:start + CHUNK] = paddle.matmul(scaled[start:start + CHUNK], weight, transpose_y=True)
        d_weight = paddle.matmul(hidden, scaled, transpose_x=True)
        return d_hidden, d_weight, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = paddle.nn.Linear(3, 3)
        self.head = self.create_parameter([3, 5])

    def forward(self, x):
        labels = paddle.to_tensor([0, 3, 1, 4], dtype="int64")
        return ChunkedHeadSoftmaxCE.apply(self.proj(x), self.head, labels)


INPUTS = [([4, 3], "float32", True)]
# paddle 2.6.2's Program IR creates set_value's output in a sub-block as a global-block
# variable (LayerHelper._create_global_variable_for_type_inference), which the training
# program of to_static does not carry ("Tensor holds no memory", loudly); the framework's own
# path does the same. The exported program keeps it (legacy.py `_keep_sub_block_variables`).
MODES_2_6 = ("eager", "to_static", "sot", "static", "jit_save")
