"""Quantization-aware training with straight-through estimators: channel-wise abs-max fake
quant of a weight and per-tensor fake quant of the activation with a frozen scale; the scale
is a stop_gradient tensor input, the clipping mask is saved, bit width and axis are args.
"""
import paddle
from paddle.autograd import PyLayer


class FakeQuantAbsMaxSTE(PyLayer):
    @staticmethod
    def forward(ctx, x, scale, bit_length=8, quant_axis=-1):
        bnt = (1 << (bit_length - 1)) - 1
        if quant_axis >= 0:
            shape = [1] * len(x.shape)
            shape[quant_axis] = -1
            scale = paddle.reshape(scale, shape)
        scale = paddle.clip(scale, min=1e-8)
        mask = paddle.cast(paddle.abs(x) <= scale, x.dtype)
        ctx.save_for_backward(mask)
        ctx.bit_length = bit_length
        clipped = paddle.clip(x / scale, -1.0, 1.0)
        return paddle.round(clipped * bnt) / bnt * scale

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensor()
        # straight through inside the clipping range, zero outside; no grad for the scale
        return grad * mask, None


class QuantedLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features, weight_bits=4, activation_bits=8):
        super().__init__()
        self.weight = self.create_parameter([in_features, out_features])
        self.bias = self.create_parameter([out_features], is_bias=True)
        # calibrated activation scale, frozen during QAT
        self.act_scale = self.create_parameter(
            [1], default_initializer=paddle.nn.initializer.Constant(1.5))
        self.act_scale.stop_gradient = True
        self.weight_bits = weight_bits
        self.activation_bits = activation_bits

    def forward(self, x):
        weight_scale = paddle.max(paddle.abs(self.weight), axis=0).detach()
        w = FakeQuantAbsMaxSTE.apply(self.weight, weight_scale, bit_length=self.weight_bits, quant_axis=1)
        x = FakeQuantAbsMaxSTE.apply(x, self.act_scale, self.activation_bits)
        return paddle.matmul(x, w) + self.bias


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = QuantedLinear(4, 6)
        self.fc2 = QuantedLinear(6, 3, weight_bits=8)

    def forward(self, x):
        return self.fc2(paddle.nn.functional.relu(self.fc1(x)))


INPUTS = [([5, 4], "float32", True)]
