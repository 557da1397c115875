"""Non-tensor arguments of every kind, positional and keyword: a function, a lambda, a
string, an int, a float, a bool, None, a tuple of numbers and a dict; all reach backward
through ctx."""
import paddle
from paddle.autograd import PyLayer


class Configured(PyLayer):
    @staticmethod
    def forward(ctx, x, act, mode, repeat, eps=None, dims=(1.0, 2.0), opts=None, flag=False):
        ctx.act = act
        ctx.mode = mode
        ctx.repeat = repeat
        ctx.eps = 0.0 if eps is None else eps
        ctx.dims = dims
        ctx.bonus = (opts or {}).get("bonus", 0.0)
        ctx.flag = flag
        y = act(x)
        ctx.save_for_backward(y)
        for _ in range(repeat):
            y = y * dims[0] + dims[1] + ctx.eps
        if mode == "double":
            y = y * 2.0
        if flag:
            y = y + ctx.bonus
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        g = dy
        if ctx.mode == "double":
            g = g * 2.0
        for _ in range(ctx.repeat):
            g = g * ctx.dims[0]
        return g * (1.0 - paddle.square(y)) if ctx.act is paddle.tanh else g * (y * 0.0 + 1.0)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = self.linear(x)
        a = Configured.apply(h, paddle.tanh, "double", 2, None, (0.5, 1.0))
        b = Configured.apply(h, lambda t: t * 1.0, mode="plain", repeat=1, eps=0.25,
                             opts={"bonus": 3.0}, flag=True)
        return a, b


INPUTS = [([2, 4], "float32", True)]
