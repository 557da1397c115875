"""Generates PyLayer-heavy Python for the benchmarks (deterministic; no framework needed).

    python3 gen_pylayer.py tree DIR [MODULES] [CLASSES_PER_MODULE]   # a package tree
    python3 gen_pylayer.py file PATH BYTES                          # one file of about BYTES

Each module defines PyLayer classes in the request's styles (saved tensors, ctx attributes,
defaults, keyword-only and variadic forward signatures, nested classes, subclasses) and
applies them in nn.Layer models; modules import and apply each other's PyLayers, through the
package's re-exports too, so tree mode's cross-module resolution is exercised.
"""
import os
import sys

CLASS = '''

class {name}(PyLayer):
    """PyLayer number {n}."""

    @staticmethod
    def forward(ctx, x, func1=paddle.tanh, *, scale={n}.0, **extra):
        ctx.func = func1
        ctx.scale = scale
        y = func1(x) * scale
        ctx.save_for_backward(x, y)
        if extra.get("verbose"):
            print("forward", {n})
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensor()
        grad = dy * (1 - paddle.square(y / ctx.scale)) * ctx.scale
        return grad


class {name}Child({name}):
    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensor()
        return dy * ctx.scale


class {name}Holder:
    class Inner(PyLayer):
        @staticmethod
        def forward(ctx, a, b, /, *rest):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g
'''

MODEL = '''

class Model{n}(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(8, 8)

    def forward(self, x):
        h = self.linear(x)
        h = {a}.apply(h, func1=paddle.sin, scale=2.0)
        h = {a}Child.apply(h) + {a}Holder.Inner.apply(h, h)
        for _ in range(3):
            h = {b}.apply(h, scale=0.5)
        act = {a}.apply
        return paddle.mean(act(h))
'''


def module_text(index, classes, modules):
    lines = [
        '"""Generated module {}."""'.format(index),
        "import paddle",
        "from paddle.autograd import PyLayer",
    ]
    if index > 0:
        lines.append("from . import m{} as previous".format(index - 1))
        lines.append("from .m{} import L{}_0 as Imported".format(index - 1, index - 1))
    body = []
    for k in range(classes):
        body.append(CLASS.format(name="L{}_{}".format(index, k), n=index * classes + k))
    for k in range(classes):
        own = "L{}_{}".format(index, k)
        other = "previous.L{}_{}".format(index - 1, k) if index > 0 else own
        body.append(MODEL.format(n=k, a=own, b=other))
    if index > 0:
        body.append("\n\ndef use_imported(x):\n    return Imported.apply(x) + previous.L{}_0Child.apply(x)\n".format(index - 1))
    return "\n".join(lines) + "".join(body)


def write_tree(root, modules=100, classes=10):
    pkg = os.path.join(root, "heavy")
    os.makedirs(pkg, exist_ok=True)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write('"""Generated package."""\n')
        for i in range(modules):
            f.write("from .m{} import L{}_0\n".format(i, i))
    for i in range(modules):
        with open(os.path.join(pkg, "m{}.py".format(i)), "w") as f:
            f.write(module_text(i, classes, modules))


def write_file(path, size):
    with open(path, "w") as f:
        f.write('"""Generated file."""\nimport paddle\nfrom paddle.autograd import PyLayer\n')
        written, n = 0, 0
        while written < size:
            chunk = CLASS.format(name="L{}".format(n), n=n) + MODEL.format(n=n, a="L{}".format(n), b="L{}".format(n))
            f.write(chunk)
            written += len(chunk)
            n += 1


if __name__ == "__main__":
    if sys.argv[1] == "tree":
        write_tree(sys.argv[2], *(int(a) for a in sys.argv[3:5]))
    else:
        write_file(sys.argv[2], int(sys.argv[3]))
