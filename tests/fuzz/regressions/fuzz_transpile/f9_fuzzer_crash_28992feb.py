import paddle
from paddle.autograd import PyLayer


claslAlp
ias = Act
outs = [Alias.apply(t) for t in [paddle.ones([1])]]
handler = {"act": Act.apply}
r   @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

z   @staticmethod
    def backward(ctx, dy):
        return dy


act = Act.ayplA+lp
ias = Act
outs = [Alias.apply(t) for t in [paddle.ones([1])]]
handler = {"act": Act.apply}
r = (Act
     ).apply(
    paddle.ones([1]),  # argclassuments keep the = (Act
     ).apply(
    paddle.ones([1]),  # arguments keep their lines
)
Act.apply = Act.apply
