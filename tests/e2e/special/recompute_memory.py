"""Recompute's memory in a static graph: 8 pre-LN transformer blocks trained under to_static.

Run as `python recompute_memory.py FORM [HIDDEN BATCH [TO_STATIC]]` in a process of its own (the
host allocator's peak is per process), transpiled by `pylayer2static run` or not (the e2e test:
hidden 256, batch 16; the benchmark, tests/bench/recompute.py: 512 and 32). TO_STATIC: `ast`
(`full_graph=True`, the default) or `sot` (`full_graph=False`, the bytecode translator), or
`eager` (no to_static: the reference). FORM: `none` (no recompute), `user` (a
CheckpointFunction-style PyLayer: forward under no_grad, backward re-runs the block under
enable_grad and returns `paddle.grad` over its input and parameters), `fleet` and `fleet_nr`
(`paddle.distributed.fleet.utils.recompute`, `use_reentrant` True and False; `preserve_rng_state=False`
for the latter, which paddle 2.6.2's CPU eager requires, and nothing here draws). Prints one JSON
line: the losses of 3 SGD steps, the first block's first weight's gradient sum after them, a digest
of the parameters after them and of the input's gradient (`trained`: equal bits, equal training),
the peak of Paddle's host allocator (`core.host_memory_stat_peak_value("Allocated", 0)`) in MB,
and the median step after the first in wall time and in the process's CPU time (all its
threads: what the step computes, less swayed by other processes on a shared machine).
"""
import hashlib
import json
import statistics
import sys
import time

import numpy as np
import paddle
from paddle.autograd import PyLayer
from paddle.distributed.fleet.utils import recompute

FORM = sys.argv[1]
HIDDEN, BATCH = (int(a) for a in sys.argv[2:4]) if len(sys.argv) > 2 else (256, 16)
TO_STATIC = sys.argv[4] if len(sys.argv) > 4 else "ast"
SEQ, BLOCKS, STEPS = 64, 8, 3


class CheckpointFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, x, *params):
        ctx.run_function = run_function
        ctx.save_for_backward(x, *params)
        with paddle.no_grad():
            return run_function(x)

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensor()
        x = saved[0].detach()
        x.stop_gradient = False
        params = list(saved[1:])
        with paddle.enable_grad():
            out = ctx.run_function(x)
        return tuple(paddle.grad([out], [x] + params, [grad]))


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.ln1 = paddle.nn.LayerNorm(HIDDEN)
        self.qkv = paddle.nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = paddle.nn.Linear(HIDDEN, HIDDEN)
        self.ln2 = paddle.nn.LayerNorm(HIDDEN)
        self.fc1 = paddle.nn.Linear(HIDDEN, 4 * HIDDEN)
        self.fc2 = paddle.nn.Linear(4 * HIDDEN, HIDDEN)

    def _run(self, x):
        h = self.ln1(x)
        q, k, v = paddle.split(self.qkv(h), 3, axis=-1)
        a = paddle.nn.functional.softmax(paddle.matmul(q, k, transpose_y=True) / HIDDEN ** 0.5)
        x = x + self.proj(paddle.matmul(a, v))
        return x + self.fc2(paddle.nn.functional.gelu(self.fc1(self.ln2(x))))

    def forward(self, x):
        if FORM == "user":
            return CheckpointFunction.apply(self._run, x, *self.parameters())
        if FORM == "fleet":
            return recompute(self._run, x)
        if FORM == "fleet_nr":
            return recompute(self._run, x, use_reentrant=False, preserve_rng_state=False)
        return self._run(x)


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block() for _ in range(BLOCKS)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x.mean()


def main():
    paddle.seed(1)
    net = Net()
    opt = paddle.optimizer.SGD(0.01, parameters=net.parameters())
    step = net if TO_STATIC == "eager" else paddle.jit.to_static(net, full_graph=TO_STATIC == "ast")
    x = paddle.to_tensor(np.random.RandomState(0).randn(BATCH, SEQ, HIDDEN).astype("float32"), stop_gradient=False)
    losses, times, cpu_times = [], [], []
    for _ in range(STEPS):
        start, cpu = time.perf_counter(), time.process_time()
        loss = step(x)
        loss.backward()
        grad = float(net.blocks[0].qkv.weight.grad.sum())
        opt.step()
        opt.clear_grad()
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu)
        losses.append(float(loss))
    peak = paddle.base.core.host_memory_stat_peak_value("Allocated", 0) / 2 ** 20
    trained = hashlib.sha256()
    for tensor in [*net.parameters(), x.grad]:
        trained.update(tensor.numpy().tobytes())
    print(json.dumps({"losses": losses, "grad": grad, "trained": trained.hexdigest(), "peak_mb": peak, "step_s": statistics.median(times[1:]),
                      "step_cpu_s": statistics.median(cpu_times[1:])}))


main()
