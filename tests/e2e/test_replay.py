"""Calls alike built from the first one's recording (`replay.py`; each IR's `tape.py`: the
whole call in the legacy IR, else both bodies; forward's in PIR), calls that differ built
again, and what a body may read to be replayed (`core/purity.py`), on both versions."""
import contextlib
import enum
import os
import re
import types

import numpy as np
import paddle
import pytest
from paddle.autograd import PyLayer

import harness
import pylayer2static_runtime as p2s
from conftest import HERE
from pylayer2static_runtime import replay
from pylayer2static_runtime.core import purity


@contextlib.contextmanager
def static_program():
    """A program being built (PIR on paddle 3.x, the Program IR on 2.6.2), under its own name
    generator; yields (main, startup)."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
            yield main, startup
    finally:
        paddle.disable_static()


CALL = ["Recorded"] if harness.PIR else ["RecordedCall"]
"""The recordings a replayed call replays: forward's in PIR, the whole call in the Program IR."""
BODIES = ["Recorded", "RecordedBackward"]
"""Those of a call the Program IR replays from its bodies' recordings: its whole call's was
made on another stack, under to_static, where the op's own call stack holds the runtime's
frames above the model's (`frames.RecordedStacks.restackable`)."""


def _kinds(replays):
    return [type(found).__name__ for found in replays]


def _off_and_on(monkeypatch, build):
    """`build()` in a static program with replay off, then on: each time (main, startup, what
    `build` returned)."""
    built = []
    for setting in ("0", "1"):
        monkeypatch.setenv("P2S_REPLAY", setting)
        with static_program() as (main, startup):
            built.append((main, startup, build()))
    return built


class _CountingRecordings(dict):
    """The runtime's recordings, listing each one a call replays (looked up while the op is
    set up, before any op is built: no frame of this file is on an op's call stack)."""

    def __init__(self, replayed):
        super().__init__()
        self.replayed = replayed

    def get(self, key, default=None):
        found = super().get(key, default)
        if found is not None:
            self.replayed.append(found)
        return found


@pytest.fixture
def replays(monkeypatch):
    """The recordings replayed while the test runs (a list, one entry per whole call or body)."""
    replayed = []
    monkeypatch.setattr(replay, "_recorded", _CountingRecordings(replayed))
    return replayed


def _canonical(program):
    """The program as its ops build it, its values numbered in order of first use."""
    return _canonical_pir(program) if harness.PIR else _canonical_legacy(program)


def _canonical_pir(program):
    """Each op, blocks inside it depth first: its name, attributes, operands and results
    (number, dtype, shape, stop_gradient)."""
    numbers = {}

    def value(v):
        if v is None or not v.initialized():
            return None
        meta = (str(v.dtype), tuple(v.shape)) if v.is_dense_tensor_type() else None
        return numbers.setdefault(v.id, len(numbers)), meta, v.stop_gradient

    def attrs(op):
        # which build a backward function or a layer's name (`Model_1`) came from: not what it computes
        return sorted((k, re.sub(r"_\d+/", "/", str(v))) for k, v in op.attrs().items() if k != "backward_function_id")

    def block(b):
        return [(op.name(), attrs(op), [value(v) for v in op.operands_source()], [value(v) for v in op.results()],
                 [block(inner) for inner in op.blocks()]) for op in b.ops]

    return block(program.global_block())


def _canonical_legacy(program):
    """The program with its variables numbered in order of first use: each op's type,
    attributes and arguments (number, dtype, shape, stop_gradient) per block."""
    from paddle.base import core

    numbers = {}
    blocks = []
    for block in program.blocks:
        ops = []
        for op in block.ops:
            attrs = []
            for name in sorted(op.attr_names):
                kind = op.attr_type(name)
                if kind == core.AttrType.BLOCKS:
                    attrs.append((name, op._blocks_attr_ids(name)))
                elif kind == core.AttrType.BLOCK:
                    attrs.append((name, op._block_attr_id(name)))
                else:
                    attrs.append((name, op.attr(name)))
            args = []
            for slot, names in sorted([("in " + s, op.input(s)) for s in op.input_names] +
                                      [("out " + s, op.output(s)) for s in op.output_names]):
                for name in names:
                    var = block._find_var_recursive(name)
                    dense = var is not None and var.type == core.VarDesc.VarType.LOD_TENSOR
                    meta = (var.dtype, tuple(var.shape), var.stop_gradient) if dense else None
                    args.append((slot, numbers.setdefault(name, len(numbers)), meta))
            ops.append((op.type, attrs, args))
        blocks.append((block.parent_idx, ops))
    return blocks


def _callstacks(program):
    """The call stack of every op of the program."""
    if not harness.PIR:
        return [op.attr("op_callstack") for block in program.blocks for op in block.ops if op.has_attr("op_callstack")]
    stacks, pending = [], [program.global_block()]
    while pending:
        for op in pending.pop().ops:
            pending.extend(op.blocks())
            stacks.append(list(op.callstack or []))
    return stacks


REPEATED_CALLS = os.path.join(HERE, "special", "repeated_calls.py")


def test_calls_alike_replay_the_first_calls_ops(transpile, replays, monkeypatch) -> None:
    """The transpiled `repeated_calls` case, built with replay off and on: the same program
    op for op (types, every attribute, call stacks included, and the same dataflow over
    variables of the same dtype, shape and stop_gradient), which computes the same loss and
    gradients. With replay on, the LoRA linear of blocks 2-4, the fake quant of blocks 3-4
    (bit widths alternate) and the residual of blocks 2 and 4 (its factor changes after
    block 2) are replayed, whole (forward only in PIR); the RMSNorm, whose forward reads a
    mutable dict and appends to a list, runs every time."""
    transpiled = transpile(REPEATED_CALLS)
    batch = np.random.RandomState(0).standard_normal((2, 3, 8)).astype("float32")
    built = []
    for setting in ("0", "1"):
        monkeypatch.setenv("P2S_REPLAY", setting)
        module = harness.load_module(transpiled, "replay_repeated_calls")
        norm_calls = len(module.NORM_CALLS)
        with static_program() as (main, startup):
            x = paddle.static.data("x", list(batch.shape), "float32")
            x.stop_gradient = False
            model = module.Model()
            loss = paddle.mean(model(x))
            params = [p for p in model.parameters() if not p.stop_gradient]
            grads = paddle.static.gradients([loss], [x] + params)
            built.append((main, startup, [loss] + grads, [p.name for p in model.parameters()]))
        assert len(module.NORM_CALLS) - norm_calls == 4
    assert _kinds(replays) == CALL * (3 + 2 + 2)
    (plain, plain_startup, plain_fetch, names), (replayed, _, replayed_fetch, _) = built
    assert _canonical(replayed) == _canonical(plain)
    paddle.enable_static()
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(plain_startup)
            want = exe.run(plain, feed={"x": batch}, fetch_list=plain_fetch)
            have = exe.run(replayed, feed={"x": batch}, fetch_list=replayed_fetch)
            values = [np.array(scope.find_var(name).get_tensor()) for name in names]
    finally:
        paddle.disable_static()
    for w, h in zip(want, have):
        np.testing.assert_array_equal(h, w)
    # and both as eager computes them, with the same parameters
    eager = harness.load_module(REPEATED_CALLS, "replay_repeated_calls_eager").Model()
    for parameter, value in zip(eager.parameters(), values):
        parameter.set_value(value)
    trained = [p for p in eager.parameters() if not p.stop_gradient]
    x = paddle.to_tensor(batch, stop_gradient=False)
    loss = paddle.mean(eager(x))
    loss.backward()
    for got, expected in zip(have, [loss.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in trained]):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


SCALE = 2.0
SETTINGS = {"scale": 2.0}
SEEN = []


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.scale = factor * SCALE
        return x * ctx.scale

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.scale


class Add(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, dy):
        return dy, dy


class ScaleFromSettings(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * SETTINGS["scale"]

    @staticmethod
    def backward(ctx, dy):
        return dy


def settings_scale():
    return SETTINGS["scale"]


class ScaleThroughHelper(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * settings_scale()

    @staticmethod
    def backward(ctx, dy):
        return dy


class Logged(PyLayer):
    @staticmethod
    def forward(ctx, x):
        SEEN.append(x.shape)
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Printed(PyLayer):
    @staticmethod
    def forward(ctx, x):
        print("building", x.shape)
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


@paddle.jit.not_to_static
def rebind_scale(value):
    global SCALE
    SCALE = value


def _in_a_loop(calls):
    """Each (class, arguments) applied from one line, as a model's loop over its blocks does."""
    for cls, args in calls:
        p2s.apply(cls, *args)


def _on_two_lines(x, other):
    """Two calls alike but for their lines (the ops' call stacks name them)."""
    p2s.apply(Scale, x, 2.0)
    p2s.apply(Scale, other, 2.0)


SCENARIOS = {
    "alike": (1, lambda x, other, frozen: _in_a_loop([(Scale, (x, 2.0)), (Scale, (other, 2.0))])),
    "another shape": (0, lambda x, other, frozen: _in_a_loop([(Scale, (x, 2.0)), (Scale, (x[:, :2], 2.0))])),
    "another value": (0, lambda x, other, frozen: _in_a_loop([(Scale, (x, 2.0)), (Scale, (other, 3.0))])),
    "an int for a float": (0, lambda x, other, frozen: _in_a_loop([(Scale, (x, 2.0)), (Scale, (other, 2))])),
    "stop_gradient": (0, lambda x, other, frozen: _in_a_loop([(Scale, (x, 2.0)), (Scale, (frozen, 2.0))])),
    "one tensor twice": (0, lambda x, other, frozen: _in_a_loop([(Add, (x, other)), (Add, (x, x))])),
    "a mutable global": (0, lambda x, other, frozen: _in_a_loop([(ScaleFromSettings, (x,)), (ScaleFromSettings, (other,))])),
    "a helper reading one": (0, lambda x, other, frozen: _in_a_loop([(ScaleThroughHelper, (x,)), (ScaleThroughHelper, (other,))])),
    "a side effect": (0, lambda x, other, frozen: _in_a_loop([(Logged, (x,)), (Logged, (other,))])),
    "print": (0, lambda x, other, frozen: _in_a_loop([(Printed, (x,)), (Printed, (other,))])),
    "another line": (1, lambda x, other, frozen: _on_two_lines(x, other)),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_calls_that_differ_are_built_again(name, replays) -> None:
    """Two calls of one class are replayed only when alike (`replay.call_key`): a different
    shape, value (or type of a value), stop_gradient or aliasing of the arguments, a body that
    reads a mutable global (itself or through a helper) or leaves a mark (a list appended to, a
    print) builds the second call by running its bodies; a call from another line is alike."""
    expected, build = SCENARIOS[name]
    seen = len(SEEN)
    with static_program():
        x = paddle.static.data("x", [2, 3], "float32")
        other = paddle.static.data("other", [2, 3], "float32")
        frozen = paddle.static.data("frozen", [2, 3], "float32")
        x.stop_gradient = other.stop_gradient = False
        build(x, other, frozen)
    assert _kinds(replays) == CALL * expected
    if name == "a side effect":
        assert len(SEEN) - seen == 2


class ClippedScale(PyLayer):
    """A tensor `if` in both bodies: control flow, blocks inside the op's blocks."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if paddle.mean(x) > 0:
            y = x * 2.0
        else:
            y = x * 0.5
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        if paddle.mean(x) > 0:
            grad = dy * 2.0
        else:
            grad = dy * 0.5
        return grad


def test_a_call_holding_control_flow_is_replayed_whole(replays, monkeypatch) -> None:
    """Two calls alike whose bodies branch on a tensor, one for each branch: in the Program IR
    the second is a copy of the first's whole call, the blocks inside its blocks included
    (made anew, each op's blocks the copies'); PIR builds both (its tapes take no op holding
    blocks). Built with replay off and on, the programs are the same op for op and compute
    the same loss and gradient, eager's."""
    batch = np.random.RandomState(1).standard_normal((2, 3)).astype("float32") + 0.5

    def build():
        x = paddle.static.data("x", [2, 3], "float32")
        x.stop_gradient = False
        loss = paddle.add_n([paddle.sum(p2s.apply(ClippedScale, x * sign)) for sign in (1.0, -1.0)])
        return [loss] + paddle.static.gradients([loss], [x])

    built = _off_and_on(monkeypatch, build)
    assert _kinds(replays) == ([] if harness.PIR else CALL)
    (plain, startup, plain_fetch), (replayed, _, replayed_fetch) = built
    assert _canonical(replayed) == _canonical(plain)
    paddle.enable_static()
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        want = exe.run(plain, feed={"x": batch}, fetch_list=plain_fetch)
        have = exe.run(replayed, feed={"x": batch}, fetch_list=replayed_fetch)
    finally:
        paddle.disable_static()
    for w, h in zip(want, have):
        np.testing.assert_array_equal(h, w)
    x = paddle.to_tensor(batch, stop_gradient=False)
    loss = paddle.add_n([paddle.sum(ClippedScale.apply(x * sign)) for sign in (1.0, -1.0)])
    loss.backward()
    for got, expected in zip(have, [loss.numpy(), x.grad.numpy()]):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_a_call_replayed_from_another_line_names_its_own_lines(replays, monkeypatch) -> None:
    """The ops of a call replayed from another line carry that line's call stack: the program
    equals one built without replay op for op, `op_callstack` included."""

    def build():
        x = paddle.static.data("x", [2, 3], "float32")
        other = paddle.static.data("other", [2, 3], "float32")
        x.stop_gradient = other.stop_gradient = False
        _on_two_lines(x, other)

    built = [(_canonical(main), _callstacks(main)) for main, _, _ in _off_and_on(monkeypatch, build)]
    assert _kinds(replays) == CALL
    assert built[1][0] == built[0][0]
    assert any("p2s.apply(Scale, other, 2.0)" in line for stack in built[1][1] for line in stack)


class ScaleLayer(paddle.nn.Layer):
    def forward(self, x):
        return p2s.apply(Scale, x, 2.0)


def test_a_call_recorded_under_to_static_names_a_static_programs_lines(replays, monkeypatch) -> None:
    """A call recorded while to_static traces a layer and replayed in a pure static program
    (the legacy IR's tapes hold no program of their own) names the static program's lines:
    under to_static the layer's converted `forward` is below the runtime's first frame (the
    runtime wraps dy2static's program build), and its line is the call's, not the body's."""
    x = paddle.ones([2, 3])
    x.stop_gradient = False
    paddle.jit.to_static(ScaleLayer(), full_graph=True)(x)

    def build():
        data = paddle.static.data("x", [2, 3], "float32")
        data.stop_gradient = False
        ScaleLayer()(data)

    built = [_callstacks(main) for main, _, _ in _off_and_on(monkeypatch, build)]
    assert _kinds(replays) == ([] if harness.PIR else BODIES)  # PIR's tapes are its program's
    assert built[1] == built[0]


def test_a_rebound_constant_is_read_again(replays) -> None:
    """A body reading a module-level constant the model rebinds between two calls alike
    otherwise is built again with the new value (the guard of `core/purity.py`); a third call
    with the first value replays the first."""
    batch = np.arange(6, dtype="float32").reshape(2, 3)
    try:
        with static_program() as (main, startup):
            x = paddle.static.data("x", [2, 3], "float32")
            outs = []
            for scale in (2.0, 5.0, 2.0):
                rebind_scale(scale)
                outs.append(p2s.apply(Scale, x, 1.0))
    finally:
        rebind_scale(2.0)
    assert _kinds(replays) == CALL
    paddle.enable_static()
    try:
        values = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"x": batch}, fetch_list=outs)
    finally:
        paddle.disable_static()
    for value, scale in zip(values, (2.0, 5.0, 2.0)):
        np.testing.assert_array_equal(value, batch * scale)


def test_replay_off_builds_every_call(replays, monkeypatch) -> None:
    """`P2S_REPLAY=0` builds every call by running its bodies."""
    monkeypatch.setenv("P2S_REPLAY", "0")
    with static_program():
        x = paddle.static.data("x", [2, 3], "float32")
        x.stop_gradient = False
        _in_a_loop([(Scale, (x, 2.0)), (Scale, (x * 1.0, 2.0))])
    assert replays == []


class Color(enum.Enum):
    RED = 1


COUNTER = 0
TABLE = [1, 2]


def _pure_helper(x, bias=1.0):
    return x + bias * SCALE


def test_purity_follows_what_a_body_reads() -> None:
    """`core/purity.py` on plain functions: what a body may read (modules of the framework
    and the language, functions it then follows, classes, immutable values, its context's
    attributes written) and the guard of those values."""
    def body(ctx, x):
        ctx.scale = SCALE
        return [paddle.abs(v) for v in _pure_helper(x)], Color.RED, math_floor(x), len(x)

    reads = purity.reads(body)
    assert reads is not None
    names = {read.name for read in reads}
    assert {"SCALE", "paddle", "_pure_helper", "Color", "math_floor"} <= names
    before = purity.guard(reads)
    assert purity.guard(reads) == before
    rebind_scale(3.0)
    try:
        assert purity.guard(reads) != before
    finally:
        rebind_scale(2.0)
    assert purity.guard(reads) == before


def math_floor(x):
    import math

    return math.floor(len(x))


def _stores_global(ctx, x):
    global COUNTER
    COUNTER += 1
    return x


def _stores_other_attribute(ctx, x):
    Scale.last = x
    return x


def _reads_list(ctx, x):
    return x * TABLE[0]


def _prints(ctx, x):
    print(x)
    return x


def _reads_unbound(ctx, x):
    return x * NOT_DEFINED  # noqa: F821


def _helper_with_cache(x, cache={}):  # noqa: B006
    cache[len(cache)] = x
    return x


def _calls_cached_helper(ctx, x):
    return _helper_with_cache(x)


def _reads_user_module(ctx, x):
    return harness.PIR and x


class Settings:
    scale = 2.0


def _reads_user_class(ctx, x):
    return x * Settings.scale


def _imports_user_module(ctx, x):
    from harness import PIR

    return x if PIR else x * 2.0


def _draws_at_build_time(ctx, x):
    return x * np.random.rand()


@pytest.mark.parametrize("fn", [_stores_global, _stores_other_attribute, _reads_list, _prints, _reads_unbound,
                                _calls_cached_helper, _reads_user_module, _reads_user_class, _imports_user_module,
                                _draws_at_build_time], ids=lambda fn: fn.__name__)
def test_purity_refuses_what_a_replay_would_not_repeat(fn) -> None:
    assert purity.reads(fn) is None


def test_purity_refuses_writing_an_enclosing_functions_variable() -> None:
    count = 0

    def body(ctx, x):
        nonlocal count
        count += 1
        return x

    assert purity.reads(body) is None


def test_frozen_values_keep_their_types() -> None:
    assert purity.frozen(1) != purity.frozen(1.0) != purity.frozen(True)
    assert purity.frozen((1, "a")) == purity.frozen((1, "a"))
    assert purity.immutable((1, (2.0, None), Color.RED, paddle.float32))
    assert not purity.immutable((1, [2]))
    assert not purity.immutable(types.SimpleNamespace())

