from paddle.autograd import PyLayer


class L(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g)
        return g
