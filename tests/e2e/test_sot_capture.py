"""SOT and the transpiled PyLayer calls: recorded as one call of SOT's graph where the release
can (paddle 3.3.1), a clean graph break where it cannot (2.6.2), results equal to eager either way.

Every case of cases/ runs its transpiled model under `paddle.jit.to_static(model,
full_graph=False)` (SOT, the default of a plain `@to_static`) with SOT's minimum graph size set
to 0: SOT otherwise runs a graph of fewer than 10 ops eagerly (`MIN_GRAPH_SIZE`, paddle 3.3.1
and 2.6.2 jit/sot/utils/envs.py), which most of these small models are, and nothing would show.
Two things are counted:

- the PyLayer calls run eagerly: the runtime runs each through `sot.run_eagerly` (apply.py),
  whose calls a profile function counts (it sees CPython's frames, not SOT's simulation);
- on 3.3.1, the graph breaks, from SOT's own collector of break reasons (env `SOT_COLLECT_INFO`,
  jit/sot/utils/info_collector.py `BreakGraphReasonInfo`), and the subgraphs SOT ran, with
  their programs (`SubGraphInfo`). A break is at a PyLayer call when SOT was told to break at
  the runtime's entry points (`ForceBreak` "Force run apply", what `paddle.jit.marker.
  force_dynamic` gives) or the runtime asked for it (a reason starting `sot.BREAK_PREFIX`).

On 3.3.1 a case has no break at a PyLayer call, no PyLayer call run eagerly, and is ONE subgraph
holding its pylayer ops, unless it is listed below with the reason. On 2.6.2 (no
`paddle.jit.marker`) every PyLayer call breaks the graph and runs eagerly, once: the count
equals the eager run's.

Each case is measured in a Python process of its own (this file run as a script), a few at a
time: SOT keeps state across the models a process runs that decides what it translates (3.3.1
caches resume code by code objects, which compare equal across two imports of one file,
opcode_executor.py `create_resume_fn`, and keeps a status per code object address,
eval_frame_tools.cc `CodeStatus`). Run after test_cases.py in one process, a case had resume
code that read globals of the other import (NameError 'paddle_set_eval_frame_fn'), and one
(`real_mix_recompute_block`, after two other recompute cases) had a sublayer run untranslated.
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Tuple

import paddle
import pytest

import harness
from conftest import CASES_DIR, case_names
from pylayer2static_runtime import framework, sot

ON_2_6 = paddle.__version__.startswith("2.6")
# Whether the runtime has SOT record PyLayer calls on this release (3.3.1: `paddle.jit.marker.
# unified`; 2.6.2 and 3.0.0 have no marker, and each call breaks the graph).
RECORDED = framework.sot_unified_marker() is not None

# Calls the runtime keeps out of SOT's graph on 3.3.1 (sot.py says why), and the reason's text.
KEPT_OUT = {
    # forward appends to a module-level list / writes a dict item (core/writes.py): SOT would run
    # it more than once per call, or not at all; eagerly it runs once, in call order.
    "decorator_forms": "writes Python state",
    "decorators": "writes Python state",
}

# Cases that apply none of their own PyLayers, only Paddle's recompute: on 3.3.1 each call is one
# call of SOT's graph (the runtime's recompute op, docs/DESIGN.md "Recompute in a static graph"),
# none runs eagerly; without the marker SOT simulates Paddle's eager recompute and breaks in it.
PADDLE_ONLY = {"fleet_recompute_blocks"}

# Cases whose forward SOT 3.3.1 leaves to CPython whole, untranslated (no subgraph, no break):
# on Python 3.11 it does not translate a function holding a `with` block (sot.py).
NOT_TRANSLATED_BY_SOT = {
    "forward_only",  # `with paddle.no_grad()`
    "under_no_grad",  # `with paddle.no_grad()`
    "under_amp",  # `with paddle.amp.auto_cast()`
}

# Cases where SOT 3.3.1 breaks the graph for reasons of its own (from its collector) around
# PyLayer calls: the reason, and whether the calls then run eagerly inside a function SOT runs
# natively (else each is recorded in a subgraph beside the break).
BROKEN_BY_SOT = {
    # The PyLayer classes are made inside the functions applying them.
    "real_mp_ops": ("opcode: LOAD_BUILD_CLASS is not supported", True),
    # `self.parameters()` (its `set()`) in the line that applies CheckpointFunction; the call
    # is recorded after the break (its forward reads the parameters directly, which are its
    # arguments too: sot.py `_as_program_parameters`).
    "real_recompute_function": ("Not support builtin function: set", False),
    "real_mix_recompute_block": ("Not support builtin function: set", False),
    "real_checkpoint_nested_swiglu": ("Not support builtin function: set", False),
    # ... and a loop SOT cannot simulate, around the calls.
    "real_mix_recompute_lora_quant": ("Not support builtin function: set", True),
}

# A PyLayer re-running a Layer it is given (reading its parameter directly, which it is given
# too), recorded in SOT's graph on 3.3.1; one reading a buffer of that Layer directly, kept out
# of it; two given a functools.partial and a bound method, recorded (sot.py gives SOT guards
# for both).
ARGUMENTS_MODULE = '''
import functools

import paddle
from paddle.autograd import PyLayer


class Checkpoint(PyLayer):
    @staticmethod
    def forward(ctx, block, x, w):
        ctx.block = block
        ctx.save_for_backward(x, w)
        with paddle.no_grad():
            return block(x)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensor()
        x = x.detach()
        x.stop_gradient = False
        with paddle.enable_grad():
            y = ctx.block(x)
        return tuple(paddle.grad([y], [x, w], [dy]))


class Linear(PyLayer):
    """fn(x) for a linear fn, its own gradient."""

    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        return fn(x)

    @staticmethod
    def backward(ctx, dy):
        return ctx.fn(dy)


class Masked(PyLayer):
    """x times the mask of the layer it is given (a buffer, no parameter)."""

    @staticmethod
    def forward(ctx, x, layer):
        ctx.layer = layer
        return x * layer.mask

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.layer.mask


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def scale(self, x):
        return x * self.factor


TRIPLE = functools.partial(paddle.scale, scale=3.0)
HALF = Scaler(0.5)


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([4, 4])
        self.register_buffer("mask", paddle.to_tensor([1.0, 0.0, 1.0, 0.5]))

    def forward(self, x):
        return paddle.tanh(paddle.matmul(x, self.w))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        h = Checkpoint.apply(self.block, x, self.block.w)
        h = Masked.apply(h, self.block)
        h = Linear.apply(h, TRIPLE)
        h = Linear.apply(h, HALF.scale)
        return paddle.matmul(h, self.block.w, transpose_y=True) + 1.0


INPUTS = [([3, 4], "float32", True)]
'''


# Bodies dy2static rewrites with names of its own (a `for` inside an `if`), in forward, in
# backward and in a function forward calls (converted by dy2static's `convert_call`, not by the
# runtime): SOT infers a recorded call's meta under a unique-name prefix of its own, which made
# the names miss dy2static's prefix test, a SyntaxError (`nonlocal ___SOT_INFER_META_INNER_VAR_
# _for_loop_iter_iterator_1`), and the call a graph break (convert.py `plain_names`).
LOOPS_IN_BRANCHES_MODULE = '''
import paddle
from paddle.autograd import PyLayer


def chunked_sum(x, chunks, on):
    out = paddle.zeros_like(x)
    if on:
        for i in range(chunks):
            out = out + x * (i + 1)
    return out


class Chunked(PyLayer):
    @staticmethod
    def forward(ctx, x, chunks, on):
        ctx.chunks, ctx.on = chunks, on
        return chunked_sum(x, chunks, on)

    @staticmethod
    def backward(ctx, dy):
        grad = paddle.zeros_like(dy)
        if ctx.on:
            for i in range(ctx.chunks):
                grad = grad + dy * (i + 1)
        return grad


class Looped(PyLayer):
    @staticmethod
    def forward(ctx, x, chunks):
        out = x
        if chunks > 1:
            for _ in range(chunks):
                out = out * 0.5
        ctx.chunks = chunks
        return out

    @staticmethod
    def backward(ctx, dy):
        return dy * (0.5 ** ctx.chunks if ctx.chunks > 1 else 1.0)


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = paddle.nn.Linear(4, 4)

    def forward(self, x):
        h = Chunked.apply(self.lin(x), 3, True)
        return Looped.apply(h, 2)


INPUTS = [([3, 4], "float32", True)]
'''


# Paddle's own recompute, reentrant (a block through a function made for it, as PaddleNLP's
# `create_custom_forward`; a Sequential of blocks) and not, `{recomputed}` True; False, the same
# model without recompute, the reference (recompute's gradients are eager's own ops run again:
# equal bits). `recompute_sequential` is in test_recompute.py: the worker runs the
# model eagerly too, where paddle 3.3.1's fails with two segments.
RECOMPUTE_MODULE = '''
import paddle
from paddle.distributed.fleet.utils import recompute

RECOMPUTED = {recomputed}


def create_custom_forward(module):
    def custom_forward(*inputs):
        return module(*inputs)

    return custom_forward


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = paddle.nn.LayerNorm(8)
        self.up = paddle.nn.Linear(8, 16)
        self.down = paddle.nn.Linear(16, 8)

    def forward(self, x):
        return x + self.down(paddle.nn.functional.gelu(self.up(self.norm(x))))


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.first = Block()
        self.second = Block()
        self.tail = paddle.nn.Sequential(Block(), Block(), Block(), Block())

    def forward(self, x):
        if not RECOMPUTED:
            return self.tail(self.second(self.first(x)))
        h = recompute(create_custom_forward(self.first), x)
        h = recompute(self.second, h, use_reentrant=False, preserve_rng_state=False)
        return recompute(self.tail, h)


INPUTS = [([2, 3, 8], "float32", True)]
TOLERANCE = (0.0, 0.0)
'''


class SotRun(NamedTuple):
    difference: str  # how the SOT run differs from the original run eagerly, or ""
    eager_run_calls: int  # PyLayer calls the transpiled model makes run eagerly
    eager_calls: int  # PyLayer calls run eagerly under SOT
    breaks: List[Tuple[str, str]]  # 3.3.1: (reason class, reason) of each graph break
    subgraph_pylayer_ops: List[int]  # 3.3.1: pylayer ops in each subgraph SOT ran


def _count_calls(code: Any, run: Callable[[], Any]) -> Tuple[Any, int]:
    """`run()` and how many times CPython entered `code` meanwhile.

    The profile function is Python, called at every call event: SOT would translate its frame
    like any other, so this file joins SOT's skip list, as the runtime's own files do (sot.py).
    """
    from paddle.jit.sot.opcode_translator import skip_files  # paddle 3.3.1 and 2.6.2

    skip_files.skip_file_names.add(os.path.abspath(__file__))
    skip_files.setup_skip_files()
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code is code:
            calls += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        value = run()
    finally:
        sys.setprofile(previous)
    return value, calls


def _measure(original_path: str, transpiled_path: str) -> SotRun:
    """The transpiled model under SOT, every graph compiled, against the original run eagerly
    (in the worker process)."""
    from paddle.jit.sot.utils.envs import min_graph_size_guard  # paddle 3.3.1 and 2.6.2

    original = harness.load_module(original_path, "e2e_sot_capture_original")
    transpiled = harness.load_module(transpiled_path, "e2e_sot_capture_transpiled")
    state = harness.reference_state(original)
    expected = harness.run_eager(original, state)
    eagerly = sot.run_eagerly.__code__
    _, eager_run_calls = _count_calls(eagerly, lambda: harness.run_eager(transpiled, state))
    with min_graph_size_guard(0):
        result, calls = _count_calls(eagerly, lambda: harness.run_sot(transpiled, state))
    try:
        harness.assert_same(result, expected, tol=harness.tolerance(original), sot=True)
        difference = ""
    except AssertionError as exc:
        difference = str(exc)
    if ON_2_6:  # no collector of break reasons
        return SotRun(difference, eager_run_calls, calls, [], [])
    from paddle.jit.sot.utils.exceptions import BreakGraphInlineCallBreak
    from paddle.jit.sot.utils.info_collector import InfoCollector, InfoType

    collector = InfoCollector()
    reasons = collector.get_info_dict(InfoType.E2E_INFO).get("BreakGraphReasonInfo", [])
    # A break inside an inlined call is filed once more for each call around it.
    breaks = [(type(info.reason).__name__, str(info.reason)) for info in reasons
              if not isinstance(info.reason, BreakGraphInlineCallBreak)]
    subgraphs = collector.get_info_dict(InfoType.STEP_INFO).get("SubGraphInfo", [])
    collector.clear()  # else printed at exit, into the output read back
    return SotRun(difference, eager_run_calls, calls, breaks, [info.graph.count("pd_op.pylayer") for info in subgraphs])


_RESULT = "sot-capture-result: "


def _measured(original_path: str, transpiled_path: str) -> SotRun:
    """`_measure` in a Python process of its own (the module docstring says why)."""
    env = dict(os.environ, SOT_COLLECT_INFO="breakgraph_reason,subgraph_info")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), original_path, transpiled_path],
                          capture_output=True, text=True, env=env, cwd=os.path.dirname(os.path.abspath(__file__)))
    lines = [line for line in proc.stdout.splitlines() if line.startswith(_RESULT)]
    assert proc.returncode == 0 and lines, f"worker exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return SotRun(*json.loads(lines[-1][len(_RESULT):]))


def _original_path(name: str) -> str:
    return os.path.join(CASES_DIR, name + ".py")


@pytest.fixture(scope="module")
def sot_runs(request, transpile) -> Iterator[Dict[str, "concurrent.futures.Future[SotRun]"]]:
    """The SOT run of every selected case, started together, a few processes at a time; those
    not yet started when the module ends (`-x`) are cancelled."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    runs: Dict[str, "concurrent.futures.Future[SotRun]"] = {}
    for item in request.session.items:
        name = getattr(item, "callspec", None) and item.callspec.params.get("name")
        if item.module is sys.modules[__name__] and name and name not in runs:
            path = _original_path(name)
            runs[name] = pool.submit(_measured, path, transpile(path))
    yield runs
    pool.shutdown(cancel_futures=True)


def _forced_at_pylayer_call(kind: str, reason: str) -> bool:
    """A break SOT was told to make at the runtime's `apply` or an `applier` wrapper."""
    return kind == "ForceBreak" and re.fullmatch(r"Force run (\w+\.)?apply", reason) is not None


# The cases SOT runs on this release (on 2.6.2 not those a framework bug rules out, MODES_2_6);
# the worker process needs none.
CASES = [] if __name__ == "__main__" else [
    name for name in case_names()
    if "sot" in harness.case_modes(harness.load_module(_original_path(name), f"e2e_sot_capture_{name}"))
]


@pytest.mark.parametrize("name", CASES)
def test_sot_and_the_pylayer_calls_of_a_case(name: str, sot_runs) -> None:
    run = sot_runs[name].result()
    assert not run.difference, run.difference
    if name in PADDLE_ONLY:
        if RECORDED:
            assert not run.breaks, [reason for _, reason in run.breaks]
            assert len(run.subgraph_pylayer_ops) == 1 and run.subgraph_pylayer_ops[0] >= 1, run.subgraph_pylayer_ops
        return
    assert run.eager_run_calls >= 1, "the case applies no PyLayer eagerly"
    if not RECORDED:
        # No marker: each PyLayer call breaks SOT's graph and runs eagerly, exactly once.
        assert run.eager_calls == run.eager_run_calls
        return

    reasons = [reason for _, reason in run.breaks]
    assert not [b for b in run.breaks if _forced_at_pylayer_call(*b)], f"breaks at PyLayer calls: {reasons}"
    kept = [reason for reason in reasons if reason.startswith(sot.BREAK_PREFIX)]
    if name in KEPT_OUT:
        assert kept and all(KEPT_OUT[name] in reason for reason in kept), reasons
    else:
        assert not kept, f"PyLayer calls kept out of SOT's graph: {kept}"
    if name in NOT_TRANSLATED_BY_SOT:
        assert not reasons and not run.subgraph_pylayer_ops, reasons
    if name in BROKEN_BY_SOT:
        reason, eagerly = BROKEN_BY_SOT[name]
        assert any(reason in found for found in reasons), reasons
        if not eagerly:
            assert run.eager_calls == 0, f"{run.eager_calls} PyLayer call(s) ran eagerly"
            assert sum(run.subgraph_pylayer_ops) >= 1, "no subgraph holds a pylayer op"
            return
    if name in KEPT_OUT or name in NOT_TRANSLATED_BY_SOT or name in BROKEN_BY_SOT:
        assert run.eager_calls >= 1, "no PyLayer call ran eagerly: SOT records them now, update the lists"
        return
    assert not reasons, f"graph breaks: {reasons}"
    assert run.eager_calls == 0, f"{run.eager_calls} PyLayer call(s) ran eagerly"
    assert len(run.subgraph_pylayer_ops) == 1, f"{len(run.subgraph_pylayer_ops)} subgraphs"
    assert run.subgraph_pylayer_ops[0] >= 1, "SOT's subgraph holds no pylayer op"


def test_pylayer_arguments(transpile, tmp_path) -> None:
    """On 3.3.1 a PyLayer reading a buffer directly (not through its arguments) is kept out of
    SOT's graph, saying why, and runs eagerly, while the one re-running a Layer that reads its
    parameter directly (passed as an argument too, as recompute PyLayers do) and those given a
    functools.partial and a bound method are recorded; on 2.6.2 all four break the graph, as
    every PyLayer call does. Every gradient equals eager's (the parameter's too: its re-run in
    backward reads the value the op takes, `sot._as_program_parameters`)."""
    source = tmp_path / "pylayer_arguments.py"
    source.write_text(ARGUMENTS_MODULE, encoding="utf-8")
    run = _measured(str(source), transpile(str(source)))
    assert not run.difference, run.difference
    if not RECORDED:
        assert run.eager_calls == 4
        return
    reasons = [reason for _, reason in run.breaks]
    assert len(reasons) == 1 and re.match(sot.BREAK_PREFIX + r"forward reads \S+ directly", reasons[0]), reasons
    assert run.eager_calls == 1, "Masked runs eagerly; Checkpoint and both Linear calls are recorded"
    assert sum(run.subgraph_pylayer_ops) == 3


def test_bodies_with_loops_in_branches(transpile, tmp_path) -> None:
    """On 3.3.1 both calls are recorded, none breaks SOT's graph: forward, backward and a function
    forward calls, each with a `for` inside an `if`, convert while SOT infers the call's meta
    (before, a SyntaxError there made each call a graph break); on 2.6.2 both break cleanly."""
    source = tmp_path / "loops_in_branches.py"
    source.write_text(LOOPS_IN_BRANCHES_MODULE, encoding="utf-8")
    run = _measured(str(source), transpile(str(source)))
    assert not run.difference, run.difference
    if not RECORDED:
        assert run.eager_calls == 2
        return
    assert not run.breaks, [reason for _, reason in run.breaks]
    assert run.eager_calls == 0
    assert run.subgraph_pylayer_ops == [2]


def test_paddle_recompute(tmp_path) -> None:
    """Paddle's recompute under SOT equals the model without recompute run eagerly, bit for bit.
    On 3.3.1 each of the 3 calls is one call of SOT's one graph, the runtime's recompute op (a
    pylayer op), with no graph break (the function SOT made while simulating the model is given
    as eager makes it: sot.py `_as_eager_made`); on 2.6.2 SOT simulates Paddle's eager recompute
    and breaks in it, which then runs eagerly."""
    plain, recomputed = tmp_path / "plain.py", tmp_path / "recomputed.py"
    plain.write_text(RECOMPUTE_MODULE.format(recomputed=False), encoding="utf-8")
    recomputed.write_text(RECOMPUTE_MODULE.format(recomputed=True), encoding="utf-8")
    run = _measured(str(plain), str(recomputed))
    assert not run.difference, run.difference
    if RECORDED:
        assert not run.breaks, [reason for _, reason in run.breaks]
        assert run.subgraph_pylayer_ops == [3]


if __name__ == "__main__":  # the worker: ORIGINAL.py TRANSPILED.py
    print(_RESULT + json.dumps(_measure(sys.argv[1], sys.argv[2])))
