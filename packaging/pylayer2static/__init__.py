"""pylayer2static from a wheel: the C binary lives in the environment's scripts directory (pip
put it there, on PATH); `python -m pylayer2static` runs it. The runtime package that the
transpiled code imports is `pylayer2static_runtime`, shipped in the same wheel."""
import os
import sys
import sysconfig

try:
    from importlib.metadata import PackageNotFoundError, version as _version
    try:
        __version__ = _version("pylayer2static")
    except PackageNotFoundError:  # imported from a source tree
        __version__ = "unknown"
except ImportError:  # Python without importlib.metadata
    __version__ = "unknown"

__all__ = ["find_binary", "__version__"]

_EXE = "pylayer2static" + (".exe" if os.name == "nt" else "")


def _candidates():
    yield sysconfig.get_path("scripts")
    # pip install --user
    scheme = "nt_user" if os.name == "nt" else ("osx_framework_user" if sys.platform == "darwin" and sys._framework else "posix_user")
    try:
        yield sysconfig.get_path("scripts", scheme)
    except KeyError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    # pip install --prefix P (P/lib/pythonX.Y/site-packages/pylayer2static) and --target T (T/bin)
    yield os.path.join(here, "..", "..", "..", "..", "bin")
    yield os.path.join(here, "..", "bin")


def find_binary():
    """The path of the installed `pylayer2static` binary; FileNotFoundError when there is none."""
    seen = []
    for d in _candidates():
        if not d:
            continue
        path = os.path.normpath(os.path.join(d, _EXE))
        seen.append(path)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("pylayer2static: the binary is not installed; looked at " + ", ".join(seen))
