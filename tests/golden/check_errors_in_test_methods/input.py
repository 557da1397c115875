"""Deliberately wrong PyLayers inside test methods, as in PaddlePaddle's test_pylayer_op.py:
each is left as written, the correct ones are transpiled."""
import unittest

import paddle
from paddle.autograd import PyLayer


class TestPyLayer(unittest.TestCase):
    def test_correct(self):
        class Tanh(PyLayer):
            @staticmethod
            def forward(ctx, x):
                y = paddle.tanh(x)
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, dy):
                y, = ctx.saved_tensor()
                return dy * (1 - paddle.square(y))

        x = paddle.randn([2, 3])
        x.stop_gradient = False
        Tanh.apply(x).mean().backward()

    def test_no_forward(self):
        class Layer_no_fw(PyLayer):
            @staticmethod
            def backward(ctx, *args):
                return args

        with self.assertRaises(NotImplementedError):
            Layer_no_fw.apply(paddle.randn([2, 3]))

    def test_backward_mismatch(self):
        class Layer_bk_match(PyLayer):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 5

            @staticmethod
            def backward(ctx, dy1, dy2):
                return dy2 * 2, dy1 * 2

        x = paddle.randn([2, 3])
        x.stop_gradient = False
        z = Layer_bk_match.apply(x)
        with self.assertRaises(ValueError):
            (z[0] + z[1]).mean().backward()

    def test_no_backward(self):
        class Layer_no_bk(PyLayer):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 5

        z = Layer_no_bk.apply(paddle.randn([2, 3]))
        self.assertEqual(len(z), 2)


if __name__ == "__main__":
    unittest.main()
