"""The runtime's entry points, on the real framework."""
import os

import pytest
from paddle.jit.dy2static.convert_call_func import convert_call  # paddle 3.3.1 and 2.6.2

import harness
import pylayer2static_runtime as p2s
from conftest import CASES_DIR, HERE
from pylayer2static_runtime import op as p2s_op

ERRORS_DIR = os.path.join(HERE, "errors")


def case(name: str) -> str:
    return os.path.join(CASES_DIR, name + ".py")


def test_require_refuses_another_version() -> None:
    p2s.require(p2s.__version__)
    with pytest.raises(ImportError, match="pylayer2static_runtime==9.9.9"):
        p2s.require("9.9.9")


def test_entry_points_are_left_alone_by_convert_call(transpile) -> None:
    module = harness.load_module(transpile(case("generic_path")), "e2e_runtime_generic_path")
    assert convert_call(p2s.apply) is p2s.apply
    assert convert_call(module.double) is module.double


def test_to_static_goes_through_the_registered_builder(transpile, monkeypatch) -> None:
    module = harness.load_module(transpile(case("request_full")), "e2e_runtime_request_full")
    built = []
    real_build = p2s_op.PyLayerOp.build

    def counting_build(self, forward, backward):
        built.append(self.cls)
        return real_build(self, forward, backward)

    monkeypatch.setattr(p2s_op.PyLayerOp, "build", counting_build)
    harness.run_to_static(module, harness.reference_state(module))
    assert built == [module.cus_tanh]


def test_default_stands_for_forwards_own_default(transpile) -> None:
    module = harness.load_module(transpile(case("request_full")), "e2e_runtime_defaults")
    op = p2s.PyLayerOp(module.cus_tanh, (1.0, abs, p2s.DEFAULT), {})
    assert op.args[2] is module.cus_tanh.forward.__defaults__[0]
    assert repr(p2s.DEFAULT) == "pylayer2static_runtime.DEFAULT"


def test_static_programs_leave_no_inplace_map_entries(transpile) -> None:
    """Converted code in a pure static program records its in-place writes in dy2static's map
    only while it is built: left behind, they outlive the program and a later program with
    the same id reads freed values (paddle 3.0.0-3.2.2 segfaults)."""
    module = harness.load_module(transpile(case("inplace_writes")), "e2e_runtime_inplace_writes")
    inplace = p2s_op._inplace_map()
    before = {key: len(entries) for key, entries in inplace.params_dict.items()}
    harness.run_static(module, harness.reference_state(module))
    after = {key: len(entries) for key, entries in inplace.params_dict.items()}
    assert after == before


def test_a_failed_to_static_build_forgets_its_records(transpile) -> None:
    """dy2static records a program's parameters and in-place writes by id(program) and drops
    them when the build returns, not when it raises; left behind, the next program given the
    freed id inherits another layer's parameters (`jit.save` KeyError, paddle 2.6.2-3.3.1) or,
    under PIR, values of the freed program. A contract error must not poison later builds."""
    from pylayer2static_runtime import dy2static as p2s_dy2static

    module = harness.load_module(transpile(os.path.join(ERRORS_DIR, "autograd_backward.py")),
                                 "e2e_runtime_failed_build")
    owners = p2s_dy2static._program_records()
    before = p2s_dy2static._recorded_keys(owners)
    with pytest.raises(p2s.PyLayerContractError):
        harness.run_to_static(module, harness.reference_state(module))
    assert p2s_dy2static._recorded_keys(owners) == before
