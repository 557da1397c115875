"""A package whose PyLayers are defined in one module and applied in others."""
from .ops import Scale

__all__ = ["Scale"]
