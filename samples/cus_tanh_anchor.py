"""The request's initial anchor: forward/backward take tensors and call Paddle APIs only.

Run eagerly as is (`python samples/cus_tanh_anchor.py`), or transpile it with
pylayer2static and run the copy; `samples/demo.py` compares the two.
"""
import os
import tempfile

import paddle
from paddle.autograd import PyLayer
from paddle.jit import to_static


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


class SimpleNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    @to_static
    def forward(self, x):
        y = self.linear(x)
        out = cus_tanh.apply(y)
        return paddle.mean(out)


def train(net, opt, steps=10):
    losses = []
    for i in range(steps):
        out = net(paddle.randn([2, 4]))
        out.backward(); opt.step(); opt.clear_grad()
        print("loss: ", out.item())
        losses.append(out.item())
    return losses


def save(net, path):
    x_spec = paddle.static.InputSpec(shape=[-1, 4], dtype='float32', name='x')
    paddle.jit.save(net, path, input_spec=[x_spec])


if __name__ == "__main__":
    net = SimpleNet()
    train(net, paddle.optimizer.SGD(0.001, parameters=net.parameters()))
    with tempfile.TemporaryDirectory() as tmp:
        save(net, os.path.join(tmp, "simple_net"))
        print("saved to", os.path.join(tmp, "simple_net"), sorted(os.listdir(tmp)))
