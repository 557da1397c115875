"""Cases that are modules of a package (packages/p2scases/models/*.py), transpiled as one
tree: the original and the transpiled package are imported side by side under the same
name (each import purges the other from sys.modules; the module objects stay alive)."""
import importlib
import os
import subprocess
import sys
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = os.path.join(HERE, "packages")
PACKAGE = "p2scases"


def case_names() -> List[str]:
    models = os.path.join(PACKAGES, PACKAGE, "models")
    return sorted(f[:-3] for f in os.listdir(models) if f.endswith(".py") and f != "__init__.py")


def _purge() -> None:
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def import_cases(root: str) -> Dict[str, Any]:
    """{case: module} of the package tree under `root`."""
    _purge()
    sys.path.insert(0, root)
    try:
        return {name: importlib.import_module(f"{PACKAGE}.models.{name}") for name in case_names()}
    finally:
        sys.path.remove(root)
        _purge()


def transpile_tree(binary: str, out: str) -> None:
    """`pylayer2static PACKAGES -o out` (tree mode); AssertionError when it fails."""
    proc = subprocess.run([binary, PACKAGES, "-o", out], capture_output=True, text=True)
    assert proc.returncode == 0, f"{binary} {PACKAGES} -o {out} exited {proc.returncode}:\n{proc.stderr}"


ORIGINALS = import_cases(PACKAGES)
