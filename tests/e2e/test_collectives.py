"""The runtime's `dist.all_gather(tensor_list, x)` for PIR programs (collectives.py), built in
one process that says it has 2 ranks (the legacy IR refuses fewer at build time): running it
needs the ranks, which tests/dist (`make e2e-dist`) has."""
import importlib

import paddle
import paddle.distributed as dist
import pytest

import pylayer2static_runtime  # noqa: F401  (installs the collectives)

PIR = paddle.__version__.startswith("3.")
STATIC_ALL_GATHER = importlib.import_module("paddle.distributed.communication.stream.all_gather")


def _ops(program):
    if PIR:
        return [op.name() for op in program.global_block().ops]
    return [op.type for op in program.global_block().ops]


def _build(shape):
    """A static program all-gathering a `shape` input into a list; (program, list)."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", shape, "float32")
            parts = [x]  # all_gather replaces what the list holds
            dist.all_gather(parts, x)
        return main, parts
    finally:
        paddle.disable_static()


@pytest.fixture
def two_ranks(monkeypatch):
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)


@pytest.mark.parametrize("shape", [[2, 3], []], ids=["2-D", "0-D"])
def test_all_gather_into_list_builds(shape, two_ranks):
    main, parts = _build(shape)
    assert [list(part.shape) for part in parts] == [shape, shape]
    assert ("pd_op.all_gather" if PIR else "c_allgather") in _ops(main)


@pytest.mark.skipif(not PIR, reason="the legacy IR builds the list form itself")
def test_framework_function_fails_in_pir(two_ranks):
    """What the runtime replaces: paddle 3.3.1's own function builds a legacy op in a PIR program."""
    legacy = STATIC_ALL_GATHER._all_gather_in_static_mode._p2s_legacy
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
            x = paddle.static.data("x", [2, 3], "float32")
            with pytest.raises(TypeError, match="in operator all_gather should be one of"):
                legacy([], x, None, True)
    finally:
        paddle.disable_static()
