"""framework_uaf.py [--runs N] [--keep] [--no-pylayer] — the PIR crash without pylayer2static.

PaddlePaddle alone (this imports no module of this project, and checks it), in the pattern of
its own dy2static tests (test_pylayer.py's `_run_and_compare`): each round makes a new
`paddle.jit.to_static(full_graph=True)` function calling a PyLayer whose forward saves its
output for backward, calls it once eagerly (to_static disabled) and once as a static graph
with a backward, then drops it. Run under glibc's malloc perturbation, which overwrites freed
memory at once:

    GLIBC_TUNABLES=glibc.malloc.perturb=170 .venv/bin/python tests/stress/framework_uaf.py

paddlepaddle 3.3.1 then dies by SIGSEGV within a few dozen rounds, in PIR autodiff of a fresh
training program (backward_utils.inverse_sort_op, get_used_external_value of the pylayer op
reads a value whose memory was freed: 0xaaaaaaaaaaaaaaaa in gdb), the crash that the transpiled
conformance file shows about once in 45 runs without perturbation. --keep keeps every round's
function alive, and the crash does not come; --no-pylayer calls paddle.tanh instead of the
PyLayer (it crashes too, more rarely); --runtime imports pylayer2static_runtime first, whose
patch `pir.RunnableProgram._get_program_all_values` removes the cause (docs/RELIABILITY.md).
Exit 0 and `framework_uaf: N rounds, no crash` when every round ran.
"""
import argparse
import faulthandler
import sys

import paddle
from paddle.autograd import PyLayer
from paddle.jit.api import ProgramTranslator


class SavedTanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


def make(pylayer):
    if pylayer:
        @paddle.jit.to_static(full_graph=True)
        def step(x):
            return SavedTanh.apply(x)
    else:
        @paddle.jit.to_static(full_graph=True)
        def step(x):
            return paddle.tanh(x)
    return step


def one_round(step):
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    translator = ProgramTranslator()
    translator.enable(False)
    try:
        eager = step(x.detach().clone())
        eager.mean().backward()
    finally:
        translator.enable(True)
    static_x = x.detach().clone()
    static_x.stop_gradient = False
    static = step(static_x)
    static.mean().backward()
    return eager, static


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--keep", action="store_true", help="keep every round's function alive")
    parser.add_argument("--no-pylayer", action="store_true", help="paddle.tanh instead of the PyLayer")
    parser.add_argument("--runtime", action="store_true", help="import pylayer2static_runtime (its patches) first")
    args = parser.parse_args(argv)
    if args.runtime:
        import pylayer2static_runtime  # noqa: F401  (installs the runtime's framework patches)
    faulthandler.enable()  # after paddle's own handler: the Python frames of a crash
    kept = []
    for n in range(1, args.runs + 1):
        step = make(not args.no_pylayer)
        one_round(step)
        if args.keep:
            kept.append(step)
        print("framework_uaf: round %d" % n, flush=True)
    own = sorted(name for name in sys.modules if name.startswith("pylayer2static"))
    if own and not args.runtime:
        raise SystemExit("framework_uaf: imported %s; this must run on the framework alone" % ", ".join(own))
    print("framework_uaf: %d rounds, no crash" % args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
