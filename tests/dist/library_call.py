"""library_call.py OUT.json — one process, started by run.py as
`pylayer2static run --package sp_library library_call.py OUT.json` (PYTHONPATH: the library's
copy, tests/dist, tests/e2e).

`sp_library/layers.py`, a model library's module, imports Paddle's own `ScatterOp` from
`paddle.distributed.fleet.utils.sequence_parallel_utils` and applies it as written. With fleet's
hybrid topology in this one process (mp_degree 1), the library's layer is built under
`paddle.jit.to_static` (AST), in a static program (`enable_static`) and, on paddle 3.x, under SOT;
this writes, for each, the pylayer ops of the program before inlining (SOT: of each subgraph it
ran, from its own collector, env `SOT_COLLECT_INFO`; and its graph breaks), whether the import hook
transpiled the module, and which builder the runtime has for the class (its static twin's).

Values are not compared with eager here: in one process fleet's model-parallel group of one rank
is no process group (`new_group` gives rank -1 to a group of one), so Paddle's eager `scatter`
slices `[-s:0]`, an empty tensor; tests/dist/models.py compares Paddle's classes with eager on 2
ranks.
"""
import json
import sys

import numpy as np
import paddle
from paddle.distributed import fleet

import harness  # tests/e2e/harness.py
import models  # tests/dist/models.py

SHAPE = [4, 2, 8]


def to_static_ops(layer_cls):
    layer = layer_cls(SHAPE[-1])
    static = paddle.jit.to_static(layer, full_graph=True)
    static(paddle.to_tensor(np.ones(SHAPE, "float32")))
    return harness.count_pylayer_ops(static.forward.concrete_program.main_program)


def static_program_ops(layer_cls):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            out = layer_cls(SHAPE[-1])(paddle.static.data("hidden", SHAPE, "float32"))
        count = harness.count_pylayer_ops(main)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        (value,) = exe.run(main, feed={"hidden": np.ones(SHAPE, "float32")}, fetch_list=[out])
        return count, list(value.shape)
    finally:
        paddle.disable_static()


def sot_subgraphs(layer_cls):
    """pylayer ops of each subgraph SOT ran, and its graph breaks (paddle 3.x's collector)."""
    from paddle.jit.sot.utils.envs import min_graph_size_guard
    from paddle.jit.sot.utils.info_collector import InfoCollector, InfoType

    layer = layer_cls(SHAPE[-1])
    with min_graph_size_guard(0):
        static = paddle.jit.to_static(layer, full_graph=False)
        for _ in range(2):
            static(paddle.to_tensor(np.ones(SHAPE, "float32")))
    collector = InfoCollector()
    breaks = [str(info.reason) for info in collector.get_info_dict(InfoType.E2E_INFO).get("BreakGraphReasonInfo", [])]
    subgraphs = [info.graph.count("pd_op.pylayer") for info in
                 collector.get_info_dict(InfoType.STEP_INFO).get("SubGraphInfo", [])]
    collector.clear()  # else printed at exit
    return subgraphs, breaks


def main():
    fleet.init(is_collective=True, strategy=models.model_parallel_strategy(1))
    from paddle.distributed.fleet.utils.sequence_parallel_utils import ScatterOp
    from pylayer2static_runtime import builders
    from sp_library import layers

    result = {
        "paddle": paddle.__version__,
        "transpiled": type(layers.__loader__).__name__ == "PyLayerLoader",
        "builder": builders.builder_of(ScatterOp).__qualname__,
        "to_static": to_static_ops(layers.ScatteredLinear),
    }
    result["static"], result["static_shape"] = static_program_ops(layers.ScatteredLinear)
    if not paddle.__version__.startswith("2."):  # 2.6.2's SOT runs every PyLayer call eagerly
        result["sot_subgraphs"], result["sot_breaks"] = sot_subgraphs(layers.ScatteredLinear)
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
