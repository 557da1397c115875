"""Recompute in the style of Paddle's RecomputeFunction: forward(ctx, run_function,
preserve_rng_state, *args, **kwargs); backward re-runs the layer under paddle.enable_grad,
calls paddle.autograd.backward and returns the `.grad` of the detached tensor inputs.

Non-tensor args stay on ctx, tensor ones are saved; the layer's parameters get their
gradients inside backward. Eager runs it; transpiled, building backward raises a
PyLayerContractError naming the class and pointing at paddle.grad (no static graph has
`.grad` to accumulate into).
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class RecomputeFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args, **kwargs):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.kwargs = kwargs
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if paddle.is_tensor(arg):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with paddle.no_grad():
            outputs = run_function(*args, **kwargs)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensor()
        for i, idx in enumerate(ctx.tensor_indices):
            detached = tensors[i].detach()
            detached.stop_gradient = tensors[i].stop_gradient
            inputs[idx] = detached
        with paddle.enable_grad():
            outputs = ctx.run_function(*inputs, **ctx.kwargs)
        if isinstance(outputs, paddle.Tensor):
            outputs = (outputs,)
        forward_outputs_with_grad = []
        backward_inputs_with_grad = []
        for out, grad in zip(outputs, grads):
            if not out.stop_gradient:
                forward_outputs_with_grad.append(out)
                backward_inputs_with_grad.append(grad)
        paddle.autograd.backward(forward_outputs_with_grad, backward_inputs_with_grad)
        return tuple(None if inp.stop_gradient else inp.grad for inp in inputs if paddle.is_tensor(inp))


def recompute(function, *args, **kwargs):
    preserve = kwargs.pop("preserve_rng_state", True)
    return RecomputeFunction.apply(function, preserve, *args, **kwargs)


class MLPBlock(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 4)

    def forward(self, x, mask, emb, activation="gelu"):
        act = F.gelu if activation == "gelu" else F.relu
        h = act(self.fc1(x + emb))
        if mask is not None:
            h = h * mask
        return x + self.fc2(h)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.block1 = MLPBlock()
        self.block2 = MLPBlock()

    def forward(self, x, emb):
        h = recompute(self.block1, x, None, emb, activation="relu", preserve_rng_state=False)
        return recompute(self.block2, h, None, emb)


INPUTS = [([2, 4], "float32", True), ([2, 4], "float32", False)]
