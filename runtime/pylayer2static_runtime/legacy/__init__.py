"""The legacy Program IR (paddle 2.6, and 3.x with PIR off): everything the runtime does that is its.

`adapter.py` builds a call's pylayer op (`LegacyAdapter`); `inline.py` inlines pylayer ops and
their `pylayer_grad` ops where programs run and are exported; `hooks.py` installs where that
meets the framework, and refuses training a loaded export that holds inlined PyLayers.
"""
