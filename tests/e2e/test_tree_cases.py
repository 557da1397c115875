"""Issue 5's cases split over the modules of a package, transpiled in tree mode: each
case module of packages/p2scases/models, original run eagerly vs transpiled in every mode."""
from typing import Any, Dict

import pytest

import harness
import tree_cases
from conftest import BINARY

PARAMS = [(name, mode) for name in tree_cases.case_names()
          for mode in harness.case_modes(tree_cases.ORIGINALS[name])]
_REFERENCE: Dict[str, Any] = {}


@pytest.fixture(scope="module")
def transpiled(tmp_path_factory) -> Dict[str, Any]:
    out = str(tmp_path_factory.mktemp("tree_cases"))
    tree_cases.transpile_tree(BINARY, out)
    return tree_cases.import_cases(out)


@pytest.mark.parametrize("name,mode", PARAMS, ids=[f"{n}-{m}" for n, m in PARAMS])
def test_tree_case(name: str, mode: str, transpiled) -> None:
    original = tree_cases.ORIGINALS[name]
    if name not in _REFERENCE:
        state = harness.reference_state(original)
        _REFERENCE[name] = (state, harness.run_eager(original, state))
    state, expected = _REFERENCE[name]
    harness.check_mode(transpiled[name], original, mode, state, expected)
