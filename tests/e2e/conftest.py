"""Fixtures for the e2e suite: where the transpiled copy of a case comes from."""
import os
import subprocess
from typing import Dict

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CASES_DIR = os.path.join(HERE, "cases")
HAND_DIR = os.path.join(HERE, "transpiled_by_hand")

# Until the C binary exists the suite reads the hand-transpiled copies in
# tests/e2e/transpiled_by_hand/. Set this to False (or P2S_USE_BINARY=1) to
# transpile with $P2S_BIN; a missing binary then fails every case.
USE_HAND_TRANSPILED_COPIES = os.environ.get("P2S_USE_BINARY", "") != "1"


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
        name = os.path.basename(path)
        if USE_HAND_TRANSPILED_COPIES:
            out = os.path.join(HAND_DIR, name)
            if not os.path.exists(out):
                pytest.fail(f"no hand-transpiled copy {out} for {path}")
        else:
            binary = os.environ.get("P2S_BIN", os.path.join(REPO, "build", "pylayer2static"))
            if not os.access(binary, os.X_OK):
                pytest.fail(f"pylayer2static binary not found at {binary} (set P2S_BIN)")
            out = os.path.join(transpiled_dir, name)
            proc = subprocess.run([binary, path, "-o", out], capture_output=True, text=True)
            if proc.returncode != 0:
                pytest.fail(f"{binary} {path} -o {out} exited {proc.returncode}:\n{proc.stderr}")
        _TRANSPILED[path] = out
        return out

    return run
