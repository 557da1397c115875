"""Models applying the PyLayers of p2scases.ops, one case per module."""
