"""run_time_forward.py's mistake with built-in ops: the same index out of range in the model."""
import paddle


class Model(paddle.nn.Layer):
    def forward(self, x):
        rows = paddle.to_tensor([0, 7])
        return paddle.index_select(x * 2.0, rows)  # the index out of range


INPUTS = [([2, 4], "float32", True)]
