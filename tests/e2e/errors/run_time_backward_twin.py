"""run_time_backward.py's mistake with built-in ops: the same shape mismatch in the model."""
import paddle


class Model(paddle.nn.Layer):
    def forward(self, x):
        kept = paddle.masked_select(x, x == x)
        return x * kept  # the shape mismatch


INPUTS = [([2, 4], "float32", True)]
