"""Issue 5's cases split over the modules of a package: PyLayers, their base classes,
decorators and helpers in some modules, the models applying them in others (tree mode)."""
from .ops import Affine, Poly
from .base import ScaledBase

__all__ = ["Affine", "Poly", "ScaledBase"]
