"""A model library in the style of PaddleNLP's, for tests/dist/library_call.py: its modules import
Paddle's own sequence-parallel PyLayers from paddle and apply them as written."""
