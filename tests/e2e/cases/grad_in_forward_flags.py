"""A fused regression head that computes its gradients in forward, chunk of positions by
chunk, and only scales them in backward (the PaddleNLP fused LM head's way). Whether to compute the
features' gradient it decides by reading `stop_gradient` of the transposed features, a tensor
forward made: eager runs forward with grad mode off, so it reads True and the gradient is
always computed; a forward-made tensor read False in a static graph, so the features got no
gradient, silently. Each chunk's rows go into preallocated buffers with `paddle.scatter_`
in a Python loop, the weight's gradient adds up with `+=`, and the loss is a 0-D sum of a
`paddle.empty` buffer. Its backward reads `stop_gradient` of a gradient forward saved (True
in eager) to decide whether it still needs the mean's scale."""
import paddle
from paddle.autograd import PyLayer


class FusedRegressionHead(PyLayer):
    @staticmethod
    def forward(ctx, features, weight, targets, chunk):
        # positions first: [seq, batch, width], chunks of positions
        flat = features.transpose([1, 0, 2])
        goal = targets.transpose([1, 0, 2])
        rows = flat.shape[0]
        grad_weight = paddle.zeros_like(weight) if not weight.stop_gradient else None
        grad_flat = paddle.zeros_like(flat) if flat.stop_gradient else None
        losses = paddle.empty([rows], dtype="float32")
        for start in range(0, rows, chunk):
            index = paddle.arange(start, min(start + chunk, rows))
            part = paddle.gather(flat, index, axis=0)
            err = paddle.matmul(part, weight) - paddle.gather(goal, index, axis=0)
            paddle.scatter_(losses, index, 0.5 * (err * err).sum(axis=[1, 2]), overwrite=True)
            if grad_flat is not None:
                paddle.scatter_(grad_flat, index, paddle.matmul(err, weight, transpose_y=True), overwrite=True)
            if grad_weight is not None:
                grad_weight += paddle.matmul(part.reshape([-1, part.shape[-1]]),
                                             err.reshape([-1, err.shape[-1]]), transpose_x=True)
        ctx.rows = rows
        ctx.has_flat = grad_flat is not None
        saved = [grad_flat.transpose([1, 0, 2])] if grad_flat is not None else []
        ctx.save_for_backward(*saved, grad_weight)
        return losses.sum() / rows

    @staticmethod
    def backward(ctx, grad_loss):
        saved = ctx.saved_tensor()
        grad_weight = saved[-1]
        scale = grad_loss / ctx.rows if grad_weight.stop_gradient else grad_loss
        grad_features = saved[0] * scale if ctx.has_flat else None
        return grad_features, grad_weight * scale, None


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = paddle.nn.Linear(5, 6)
        self.head = self.create_parameter([6, 3])

    def forward(self, x, y):
        h = paddle.tanh(self.body(x))
        return FusedRegressionHead.apply(h, self.head, y, 3)


INPUTS = [([2, 4, 5], "float32", True), ([2, 4, 3], "float32", False)]
