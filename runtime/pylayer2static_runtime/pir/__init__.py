"""The PIR (paddle 3.x): everything the runtime does that is PIR's.

`adapter.py` builds a call's pylayer op (`PirAdapter`); `ops.py` inlines pylayer ops in a
program; `double_backward.py` inlines a PyLayer's gradient op as autodiff builds it;
`export.py` marks and records an export's calls; `reload.py` builds them again to train a
loaded export; `collectives.py` builds list-form collectives; `hooks.py` installs where all
of it meets the framework. Imported only where the framework has PIR pylayer ops
(`framework.has_pir`).
"""
