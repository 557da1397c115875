"""samples/demo.py on the request's samples: the `make demo` verdict is OK."""
import os
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "samples"))
import demo  # noqa: E402


@pytest.mark.parametrize("sample", ["cus_tanh_full.py", "cus_tanh_anchor.py"])
def test_demo_verdict_is_ok(sample: str, transpile, capsys) -> None:
    original = os.path.join(REPO, "samples", sample)
    status = demo.main(["demo.py", original, transpile(original)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.strip().splitlines()[-1].startswith(f"OK {sample} ")
