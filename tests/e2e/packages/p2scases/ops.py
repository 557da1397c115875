"""PyLayers: subclasses of a base in another module, keyword-only parameters, helpers and
a decorator from another module, private names, several saved tensors."""
import paddle

from . import helpers
from .base import ScaledBase
from .helpers import scaled, softplus


class Square(ScaledBase):
    """forward overridden, backward inherited from base.py."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x


class Half(ScaledBase):
    """backward overridden, forward inherited from base.py."""

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 0.5 + x


class Affine(ScaledBase):
    """Not a subclass in spirit: its own forward and backward, keyword-only parameters."""

    @staticmethod
    def forward(ctx, x, w, *, scale, shift=0.0):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return x * w * scale + shift

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensor()
        g = dy * ctx.scale
        return g * w, g * x


class Smooth(ScaledBase):
    """Helpers of another module: a function, a method of an object passed in, a decorator."""

    @staticmethod
    @scaled(2.0)
    def forward(ctx, x, scaler):
        ctx.save_for_backward(x)
        return scaler.scale(softplus(x))

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 2.0 * 0.5 * helpers.sigmoid(x)


class Poly(ScaledBase):
    """Private names and several saved tensors, unpacked in several ways."""

    __k = 3.0

    @staticmethod
    def forward(ctx, x):
        sq = x * x
        ctx.__k = Poly.__k
        ctx.save_for_backward(x, sq)
        return sq * x + sq

    @staticmethod
    def backward(ctx, dy):
        x, sq = ctx.saved_tensor()
        first, *rest = ctx.saved_tensor()
        return dy * (ctx.__k * rest[0] + 2.0 * first) + sq * 0.0
