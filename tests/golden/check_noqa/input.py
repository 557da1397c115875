import paddle
from paddle.autograd import PyLayer


class Debug(PyLayer):
    @staticmethod
    def forward(ctx, x):
        print(x.numpy())  # noqa: P2S201
        print(x.tolist())  # noqa
        print(x.sum().item())  # NOQA:P2S201, P2S203
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


out = Debug.apply(paddle.ones([2]))
