"""A PyLayer class made by a factory function (fairseq/PaddleSpeech GradMultiply style):
forward and backward read the factory's argument from their closure. paddle 2.6.2's
dy2static compiles converted code as a module of its own without the closure (NameError,
the framework's own path too); the runtime gives it back (convert.py).
"""
import paddle
from paddle.autograd import PyLayer


def make_grad_multiply(scale):
    class GradMultiply(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0 if scale > 0 else x * 0.0

        @staticmethod
        def backward(ctx, grad):
            return grad * scale

    return GradMultiply


FeatureGradScale = make_grad_multiply(0.1)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.feature_extractor = paddle.nn.Linear(4, 6)
        self.encoder = paddle.nn.Linear(6, 3)

    def forward(self, x):
        features = FeatureGradScale.apply(paddle.nn.functional.gelu(self.feature_extractor(x)))
        return self.encoder(features)


INPUTS = [([3, 4], "float32", True)]
