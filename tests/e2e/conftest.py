"""Fixtures for the e2e suite: where the transpiled copy of a case comes from."""
import os
import subprocess
from typing import Dict

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CASES_DIR = os.path.join(HERE, "cases")
BINARY = os.environ.get("P2S_BIN", os.path.join(REPO, "build", "pylayer2static"))


def case_names():
    return sorted(f[:-3] for f in os.listdir(CASES_DIR) if f.endswith(".py"))


@pytest.fixture(scope="session")
def transpiled_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("transpiled"))


_TRANSPILED: Dict[str, str] = {}


@pytest.fixture(scope="session")
def transpile(transpiled_dir):
    """transpile(path) -> path of the transpiled copy of the input file `path`."""

    def run(path: str) -> str:
        if path in _TRANSPILED:
            return _TRANSPILED[path]
        if not os.access(BINARY, os.X_OK):
            pytest.fail(f"pylayer2static binary not found at {BINARY} (run make, or set P2S_BIN)")
        out = os.path.join(transpiled_dir, os.path.basename(path))
        proc = subprocess.run([BINARY, path, "-o", out], capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.fail(f"{BINARY} {path} -o {out} exited {proc.returncode}:\n{proc.stderr}")
        _TRANSPILED[path] = out
        return out

    return run
