"""nan_backward.py's mistake with built-in ops: the same square root of negative numbers."""
import paddle


class Model(paddle.nn.Layer):
    def forward(self, x):
        return x * paddle.sqrt(x - 100.0)  # the NaN


INPUTS = [([2, 4], "float32", True)]
FLAGS = {"FLAGS_check_nan_inf": True}  # stop the run at the first NaN or Inf an op makes
