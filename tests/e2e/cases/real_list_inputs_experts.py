"""A list of parameters as input next to plain tensors: a grouped expert linear (a
dense-MoE expert bank) taking the experts' weights as a list of leaf parameters and the
gate probabilities as a tensor; backward returns the input gradient, a list of weight
gradients and the gate gradient.
"""
import paddle
from paddle.autograd import PyLayer


class GroupedExpertLinear(PyLayer):
    @staticmethod
    def forward(ctx, x, expert_weights, gates):
        ctx.save_for_backward(x, gates, *expert_weights)
        outs = [paddle.matmul(x, w) * gates[:, i:i + 1] for i, w in enumerate(expert_weights)]
        return paddle.add_n(outs)

    @staticmethod
    def backward(ctx, grad):
        x, gates, *weights = ctx.saved_tensor()
        grad_x = None
        grad_weights = []
        grad_gates = []
        for i, w in enumerate(weights):
            g = grad * gates[:, i:i + 1]
            term = paddle.matmul(g, w, transpose_y=True)
            grad_x = term if grad_x is None else grad_x + term
            grad_weights.append(paddle.matmul(x, g, transpose_x=True))
            grad_gates.append(paddle.sum(paddle.matmul(x, w) * grad, axis=-1, keepdim=True))
        return grad_x, grad_weights, paddle.concat(grad_gates, axis=-1)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = paddle.nn.Linear(5, 4)
        self.experts = paddle.nn.LayerList([paddle.nn.Linear(4, 3, bias_attr=False) for _ in range(3)])
        self.gate = paddle.nn.Linear(4, 3)

    def forward(self, x):
        h = paddle.tanh(self.proj(x))
        gates = paddle.nn.functional.softmax(self.gate(h), axis=-1)
        return GroupedExpertLinear.apply(h, [expert.weight for expert in self.experts], gates)


INPUTS = [([6, 5], "float32", True)]
# paddle 2.6.2's eager PyLayer mishandles tensors inside list arguments (see list_input.py:
# the gradient of the list's first tensor goes to its last leaf tensor, the others get none),
# so there is no eager reference for gradients: on 2.6 only the eager call itself and the
# exported forward are compared.
MODES_2_6 = ("eager", "jit_save")
