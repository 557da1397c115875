try:
    import paddle
    from paddle.autograd import PyLayer
except ImportError:
    raise


class Only(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


Only.apply(paddle.ones([1]))
