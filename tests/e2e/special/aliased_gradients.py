"""A fused bias add whose backward computes the bias gradient once and returns that one tensor
for both biases (`return dx, db, db`): a LoRA bias delta and the base bias, which a second
projection also uses (tied). Eager paddle (2.6.2 and 3.3.1) hands both parameters the same
gradient tensor and then adds the tied use's gradient into it in place, so the LoRA bias's
gradient silently includes the tied use's too. The static graph gives each its own gradient.
`ClonedModel` returns `db, db.clone()`: eager then gives the right answer, the reference.
"""
import paddle
from paddle.autograd import PyLayer


class FusedBiasAdd(PyLayer):
    @staticmethod
    def forward(ctx, x, lora_bias, base_bias):
        return x + lora_bias + base_bias

    @staticmethod
    def backward(ctx, dy):
        db = dy.sum(0)
        return dy, db, db


class FusedBiasAddCloned(FusedBiasAdd):
    @staticmethod
    def backward(ctx, dy):
        db = dy.sum(0)
        return dy, db, db.clone()


class Model(paddle.nn.Layer):
    fused = FusedBiasAdd

    def __init__(self):
        super().__init__()
        self.proj = paddle.nn.Linear(4, 4, bias_attr=False)
        self.lora_bias = self.create_parameter([4], is_bias=True)
        self.base_bias = self.create_parameter([4], is_bias=True)
        self.tied = paddle.nn.Linear(4, 4, bias_attr=False)

    def forward(self, x):
        h = self.fused.apply(self.proj(x), self.lora_bias, self.base_bias)
        return h, self.tied(x) * 3.0 + self.base_bias


class ClonedModel(Model):
    fused = FusedBiasAddCloned


INPUTS = [([2, 4], "float32", True)]
