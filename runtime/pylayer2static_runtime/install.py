"""The runtime's one install step: every process-wide framework patch, and the IRs' adapters.

`install` runs once, from the package's `__init__` (generated code imports the package before
it builds or loads anything): the patches that hold for both IRs (`sot.py`, `dy2static.py`,
`recompute.py`),
then the legacy IR's (`legacy/hooks.py`) and, where the framework builds PIR programs with
pylayer ops, PIR's (`pir/hooks.py`, `pir/collectives.py`), and each IR's adapter for
`adapter.adapter_for_program` with where dy2static keeps the IR's records (`adapter.program_records`). `patch.PATCHES` lists every patch with the module making it.
"""
import functools

from . import adapter, dy2static, framework, paddle_layers, recompute, sot




@functools.lru_cache(maxsize=None)
def install() -> None:
    """Make every process-wide patch and register the IRs (once per process)."""
    from .legacy import hooks as legacy_hooks
    from .legacy.adapter import LegacyAdapter

    sot.install()
    dy2static.install()
    recompute.install()
    paddle_layers.install()
    legacy_hooks.install()
    if framework.has_pir():
        import paddle

        from .pir import collectives, hooks as pir_hooks
        from .pir.adapter import PirAdapter

        collectives.install()
        pir_hooks.install()
        # paddle 3.3.1 / 2.6.2: `in_pir_mode()` is True while a PIR program is built.
        adapter.register_ir(paddle.base.framework.in_pir_mode, PirAdapter, PirAdapter.program_records)
    adapter.register_ir(lambda: True, lambda inside_backward: LegacyAdapter(), LegacyAdapter.program_records)
