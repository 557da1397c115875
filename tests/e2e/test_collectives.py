"""The runtime's list forms of `dist.all_gather` and `dist.alltoall` for PIR programs
(pir/collectives.py), built in one process that says it has 2 ranks (the legacy IR refuses fewer
at build time): running them needs the ranks, which tests/dist (`make e2e-dist`) has for
all_gather (gloo has no all_to_all: see README.md, "Distributed training")."""
import importlib

import paddle
import paddle.distributed as dist
import pytest

import pylayer2static_runtime  # noqa: F401  (installs the collectives)

PIR = paddle.__version__.startswith("3.")
STREAM = "paddle.distributed.communication.stream"


def _all_gather(x):
    parts = [x]  # all_gather replaces what the list holds
    dist.all_gather(parts, x)
    return parts


def _alltoall(x):
    out = []
    if PIR:
        dist.alltoall(out, [x, x])
    else:  # paddle 2.6.2: alltoall(in_tensor_list, out_tensor_list)
        dist.alltoall([x, x], out)
    return out


COLLECTIVES = {  # name: (call, op built in PIR, op built in the legacy IR)
    "all_gather": (_all_gather, "pd_op.all_gather", "c_allgather"),
    "alltoall": (_alltoall, "pd_op.all_to_all", "alltoall"),
}


@pytest.fixture
def two_ranks(monkeypatch):
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)


def _ops(program):
    if PIR:
        return [op.name() for op in program.global_block().ops]
    return [op.type for op in program.global_block().ops]


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
@pytest.mark.parametrize("shape", [[2, 3], []], ids=["2-D", "0-D"])
def test_list_form_builds(name, shape, two_ranks):
    call, pir_op, legacy_op = COLLECTIVES[name]
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            parts = call(paddle.static.data("x", shape, "float32"))
    finally:
        paddle.disable_static()
    assert [list(part.shape) for part in parts] == [shape, shape]
    assert (pir_op if PIR else legacy_op) in _ops(main)


@pytest.mark.parametrize("module, args, legacy_op", [("all_gather", lambda x: ([], x, None, True), "c_allgather"),
                                                     ("all_to_all", lambda x: ([], [x, x], None, True, False), "alltoall")])
def test_framework_function_in_static_mode(module, args, legacy_op, two_ranks):
    """What the runtime replaces: paddle 3.3.1's own functions build legacy ops in a PIR program
    and fail; paddle 2.6.2's build them in its legacy program, as they should, and the runtime
    leaves them as they are there (it installs collectives only where PIR has pylayer ops)."""
    function = getattr(importlib.import_module(f"{STREAM}.{module}"), f"_{module}_in_static_mode")
    assert hasattr(function, "_p2s_legacy") == PIR
    main = paddle.static.Program()
    paddle.enable_static()
    try:
        with paddle.static.program_guard(main, paddle.static.Program()):
            x = paddle.static.data("x", [2, 3], "float32")
            if PIR:
                with pytest.raises(TypeError, match=f"in operator {module} should be one of"):
                    function._p2s_legacy(*args(x))
            else:
                function(*args(x))
    finally:
        paddle.disable_static()
    if not PIR:
        assert legacy_op in _ops(main)


class _Group:
    """What the static-mode functions read of a `paddle.distributed` group."""

    id, nranks, rank = 7, 2, 0

    @staticmethod
    def is_member():
        return True


def _with_group(x):
    parts = []
    dist.all_gather(parts, x, group=_Group)
    dist.all_reduce(parts[0], group=_Group)
    return parts


def test_group_in_static_program(two_ranks):
    """PIR: the collectives are built on the group's ring; the legacy IR keeps paddle's refusal."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [2, 3], "float32")
            if not PIR:
                with pytest.raises(AssertionError, match="Group can not be used in static graph mode"):
                    _with_group(x)
                return
            parts = _with_group(x)
    finally:
        paddle.disable_static()
    assert len(parts) == _Group.nranks
    rings = {op.name(): op.attrs()["ring_id"] for op in main.global_block().ops if "ring_id" in op.attrs()}
    assert rings == {"pd_op.all_gather": _Group.id, "pd_op.all_reduce_": _Group.id}
