"""Transpile PyLayer modules as they are imported, without a copy tree (`pylayer2static run`).

`install_import_hook()` puts a finder on `sys.meta_path` in front of the path finder. A module
of the user's project (or of a configured library such as `paddlenlp`) whose source mentions
`PyLayer` or `.apply` is loaded from the C transpiler's output, compiled under the original
file name; every other module imports as usual. The transpiler keeps the line numbers of the
user's code, so tracebacks, `inspect` and the framework's dy2static (which reads a function's
source through `linecache`, given the transpiled text here) all see the user's file.

Modules are transpiled together, one tree-mode run per import root (the `sys.path` entry a
module was found under; for a library, its top-level package): a module that applies a sibling
module's PyLayer needs the transpiler to see that sibling. The run's input is a staging copy of
the root holding the exact bytes that were hashed, so the cache key always describes what was
transpiled. Outputs are cached next to the source in `__pycache__/NAME.pylayer2static-VER.py`
(or under the user cache directory when that is not writable), keyed by the tool (runtime
version, binary path, size and mtime), the configuration file and the content of every module
of the root that defines or applies a PyLayer or is a package `__init__`; entries are written
through a temp file and `os.replace`, so concurrent processes (distributed launch) never read a
partial entry.

The project, the configuration file and its `packages` are the binary's, found and read by its
rules (`project.py`: src/project.c's and src/config.c's, mirrored). The binary is found without importing the
`pylayer2static` package, which imports this runtime (`find_binary`). Naming paddle or this
tool's own packages for the hook is an error (`refuse_never_transpiled`): they are never
transpiled, and Paddle's own PyLayers are built by the runtime when called.
"""
import ast
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import linecache
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import threading
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .project import config_file, configured_packages, project_root

__all__ = ["PackageRefused", "PyLayerImportHook", "find_binary", "install_import_hook", "refuse_never_transpiled"]

# Modules the hook never transpiles: the framework, this runtime and the tool's own package;
# naming one for the hook is an error that says why (`refuse_never_transpiled`).
_NEVER_WHY = {
    "paddle": "the framework's own modules are not transpiled: Paddle's own PyLayer classes are built "
              "as static ops by the runtime when they are called (docs/DESIGN.md, \"Paddle's own PyLayers\")",
    "pylayer2static_runtime": "this tool's runtime, which builds PyLayer calls as static ops, is not transpiled",
    "pylayer2static": "this tool's own package is not transpiled",
}
_NEVER = frozenset(_NEVER_WHY)
# The cheap pre-check: a module that defines or applies a PyLayer says one of these.
_MARKERS = (b"PyLayer", b".apply")
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages"})
_CACHE_HEADER = b"# pylayer2static cache "
_OWN_IMPORT = "import pylayer2static_runtime as _p2s"


def _runtime_version() -> str:
    # Read from the package, imported by now: importing it here would make a cycle.
    return sys.modules[__package__].__version__


def find_binary() -> str:
    """The transpiler: $P2S_BIN, else the one installed with this runtime (the wheel puts it in
    the interpreter's scripts directory), else `pylayer2static` on PATH.

    `pylayer2static run` sets $P2S_BIN to itself and `python -m pylayer2static run` to the binary
    its package finds (`pylayer2static.find_binary()`, which knows the `--user`, `--prefix` and
    `--target` layouts too): the runtime does not import that package, which imports it."""
    env = os.environ.get("P2S_BIN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise ImportError(f"pylayer2static: P2S_BIN={env} is not an executable file")
        return env
    scripts = sysconfig.get_path("scripts")
    found = shutil.which("pylayer2static", path=scripts) if scripts else None
    found = found or shutil.which("pylayer2static")
    if found:
        return found
    raise ImportError(
        f"pylayer2static: the transpiler binary was not found (looked at $P2S_BIN, {scripts} and "
        "PATH); install the pylayer2static wheel or set P2S_BIN"
    )


def _mentions_pylayer(source: bytes) -> bool:
    return any(m in source for m in _MARKERS)


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _system_dirs() -> List[str]:
    """Where the interpreter's own and installed modules live: never the user's project."""
    dirs = set()
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(name)
        if path:
            dirs.add(os.path.realpath(path))
    for path in getattr(site, "getsitepackages", lambda: [])():
        dirs.add(os.path.realpath(path))
    if getattr(site, "ENABLE_USER_SITE", False):
        dirs.add(os.path.realpath(site.getusersitepackages()))
    if sys.prefix != sys.base_prefix:  # a venv, wherever it is
        dirs.add(os.path.realpath(sys.prefix))
    return sorted(dirs)


def _import_root(fullname: str, origin: str) -> str:
    """The sys.path entry `fullname` was found under, from its file."""
    depth = fullname.count(".") + (1 if os.path.basename(origin) == "__init__.py" else 0)
    d = os.path.dirname(origin)
    for _ in range(depth):
        d = os.path.dirname(d)
    return d


class TranspileError(ImportError):
    """The transpiler rejected a module; the message holds its `file:line:col` diagnostics."""


class _Unit:
    """One import root and what a tree-mode run makes of it.

    `entry` is the sys.path entry; `tops` are the names below it that belong to the unit (None:
    every importable name). The walk enters regular packages (with `__init__.py`) and the
    directories on the way to `wanted`, the modules imported so far (namespace packages), not
    every directory (data). `sources` holds the bytes of the modules that mention a PyLayer and
    of package `__init__` files (the ones resolution reads), `others` the remaining modules,
    which the staging copy links so re-exports through them resolve too."""

    def __init__(self, hook: "PyLayerImportHook", entry: str, tops: Optional[frozenset],
                 wanted: Iterable[str]):
        self.hook = hook
        self.entry = entry
        self.tops = tops
        self.wanted_dirs = {os.path.dirname(w) for w in wanted}
        self.sources: Dict[str, bytes] = {}
        self.others: List[str] = []
        self.dirs: List[str] = []
        # A library is transpiled under the project's configuration (its warn list, its rules).
        self.config = config_file(entry if tops is None else hook.projects[0])
        self._scan()
        self.fingerprint = self._fingerprint()
        self.outputs: Optional[Dict[str, bytes]] = None
        self.errors: Dict[str, List[str]] = {}
        self.failure: Optional[str] = None

    def _scan(self) -> None:
        stack = [""]
        while stack:
            rel = stack.pop()
            path = os.path.join(self.entry, rel) if rel else self.entry
            try:
                children = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError:
                continue
            for child in children:
                crel = os.path.join(rel, child.name) if rel else child.name
                if not rel and self.tops is not None and child.name not in self.tops and \
                        os.path.splitext(child.name)[0] not in self.tops:
                    continue
                if child.is_dir(follow_symlinks=False):
                    if self._enters(child, crel, top_level=not rel):
                        self.dirs.append(crel)
                        stack.append(crel)
                elif child.name.endswith(".py") and child.is_file():
                    try:
                        with open(child.path, "rb") as f:
                            data = f.read()
                    except OSError:
                        continue
                    if child.name == "__init__.py" or _mentions_pylayer(data):
                        self.sources[crel] = data
                    else:
                        self.others.append(crel)

    def _enters(self, child: os.DirEntry, crel: str, top_level: bool) -> bool:
        if child.name.startswith(".") or child.name in _SKIP_DIRS or not child.name.isidentifier():
            return False
        if not (os.path.isfile(os.path.join(child.path, "__init__.py")) or
                any(_under(w, crel) for w in self.wanted_dirs)):
            return False
        if os.path.exists(os.path.join(child.path, "pyvenv.cfg")):
            return False
        real = os.path.realpath(child.path)
        if any(_under(real, s) for s in self.hook.system_dirs if not _under(self.entry, s)):
            return False
        return not (top_level and self.tops is None and not self.hook.in_project(real))

    def _fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(self.hook.tool_id.encode())
        if self.config is not None:
            with open(self.config, "rb") as f:
                h.update(b"\0config\0" + f.read())
        for rel in sorted(self.sources):
            h.update(b"\0" + rel.encode("utf-8", "surrogateescape") + b"\0")
            h.update(hashlib.sha256(self.sources[rel]).digest())
        return h.hexdigest()

    def transpile(self) -> None:
        """One tree-mode run over a staging copy; fills `outputs` and `errors` (or `failure`)."""
        if self.outputs is not None or self.failure is not None:
            return
        self.outputs = {}
        stage = tempfile.mkdtemp(prefix="p2s-run-")
        try:
            src, out = os.path.join(stage, "src"), os.path.join(stage, "out")
            os.mkdir(src)
            for rel in self.dirs:
                os.makedirs(os.path.join(src, rel), exist_ok=True)
            for rel, data in self.sources.items():
                with open(os.path.join(src, rel), "wb") as f:
                    f.write(data)
            for rel in self.others:
                os.symlink(os.path.join(self.entry, rel), os.path.join(src, rel))
            cmd = [self.hook.binary, src, "-o", out, "-q", "--output-format", "json", "--color", "never"]
            cmd += ["--config", self.config] if self.config else ["--no-config"]
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            stderr = proc.stderr.decode("utf-8", "replace")
            try:
                if proc.returncode not in (0, 1):
                    raise ValueError(proc.returncode)
                self._read_diagnostics(stderr, src)
            except (ValueError, KeyError, TypeError):
                shown = stderr.strip().replace(src + os.sep, self.entry + os.sep)
                self.failure = f"{self.hook.binary} exited {proc.returncode}:\n{shown}"
                return
            for rel in self.sources:
                try:
                    with open(os.path.join(out, rel), "rb") as f:
                        self.outputs[rel] = f.read()
                except FileNotFoundError:  # not written: its errors say why
                    pass
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _read_diagnostics(self, stderr: str, src: str) -> None:
        """Errors by module, from the run's JSON diagnostics on the staging copy `src`."""
        text = stderr.strip()
        for d in json.loads(text) if text else []:
            if d["severity"] != "error":
                continue
            rel = os.path.relpath(d["file"], src)
            path = os.path.join(self.entry, rel)
            self.errors.setdefault(rel, []).append(
                f"{path}:{d['line']}:{d['col']}: error[{d['code']}]: {d['message']}"
            )


class PyLayerLoader(importlib.machinery.SourceFileLoader):
    """Loads a module from the transpiler's output, compiled under the original file name; never
    writes bytecode (a `.pyc` of transpiled code would be loaded without the hook)."""

    def __init__(self, fullname: str, path: str, hook: "PyLayerImportHook", unit_key: Tuple):
        super().__init__(fullname, path)
        self.hook = hook
        self.unit_key = unit_key

    def get_code(self, fullname: str):
        st = os.stat(self.path)
        source, data = self.hook.transpiled(self.unit_key, self.path, self.name)
        original = importlib.util.decode_source(source)
        text = importlib.util.decode_source(data)
        tree = ast.parse(data, self.path)
        own = _own_import_line(original, text)
        lines = text.splitlines(True)
        if own is not None:
            # The runtime import got a line of its own (note P2S090): number the code after it
            # as in the user's file again, and show linecache the user's numbering too.
            for node in tree.body:
                if node.lineno > own:
                    ast.increment_lineno(node, -1)
            del lines[own - 1]
        # inspect and the framework's dy2static read a function's source through linecache: give
        # them the transpiled text (same line numbers) while the file on disk is unchanged.
        linecache.cache[self.path] = (st.st_size, st.st_mtime, lines, self.path)
        return compile(tree, self.path, "exec", dont_inherit=True)


def _own_import_line(original: str, transpiled: str) -> Optional[int]:
    """The 1-based line the transpiler inserted for the runtime import, or None when it joined
    an existing line (the usual case: nothing shifts)."""
    src, out = original.splitlines(True), transpiled.splitlines(True)
    for i, line in enumerate(out):
        if i >= len(src) or line != src[i]:
            if line.rstrip("\r\n") == _OWN_IMPORT and out[i + 1:i + 2] == src[i:i + 1]:
                return i + 1
            return None
    return None


class PyLayerImportHook(importlib.abc.MetaPathFinder):
    """The finder `install_import_hook` installs; `uninstall()` takes it off `sys.meta_path`."""

    def __init__(self, project: str, packages: Iterable[str], binary: Optional[str] = None):
        self.projects = [project_root(project)]
        self.packages = set(packages)
        self._binary = binary
        self._tool_id: Optional[str] = None
        self.system_dirs = _system_dirs()
        self._units: Dict[Tuple, _Unit] = {}
        self._wanted: Dict[Tuple, set] = {}
        self._lock = threading.RLock()

    @property
    def binary(self) -> str:
        if self._binary is None:
            self._binary = find_binary()
        return self._binary

    @property
    def tool_id(self) -> str:
        """What makes outputs differ besides the sources: the runtime's version and the binary
        (path, size, mtime: a rebuilt or upgraded binary invalidates the cache)."""
        if self._tool_id is None:
            st = os.stat(self.binary)
            self._tool_id = f"{_runtime_version()}:{os.path.realpath(self.binary)}:{st.st_size}:{st.st_mtime_ns}"
        return self._tool_id

    def in_project(self, path: str) -> bool:
        return any(_under(path, p) for p in self.projects) and \
            not any(_under(path, s) for s in self.system_dirs if not any(_under(p, s) for p in self.projects))

    def add(self, project: Optional[str] = None, packages: Iterable[str] = ()) -> None:
        if project is not None:
            root = project_root(project)
            if root not in self.projects:
                self.projects.append(root)
        self.packages.update(packages)

    def uninstall(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)

    def unit_key(self, fullname: str, origin: str) -> Optional[Tuple]:
        """The unit a module belongs to, or None when the hook leaves it alone."""
        top = fullname.partition(".")[0]
        if top in _NEVER:
            return None
        origin = os.path.realpath(origin)
        entry = _import_root(fullname, origin)
        if top in self.packages:
            return (entry, frozenset({top}))
        if not self.in_project(origin):
            return None
        if self.in_project(entry):
            return (entry, None)
        return (entry, frozenset({top}))  # an entry above the project: its package only

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return None
        key = self.unit_key(fullname, spec.origin)
        if key is None or not self._needs_transpile(spec.origin):
            return None
        spec.loader = PyLayerLoader(fullname, spec.origin, self, key)
        return spec

    def spec_for_main(self, path: str):
        """A loader for a script run as `__main__` (its directory is its import root), or None
        when it has no PyLayer or is outside the project."""
        real = os.path.realpath(path)
        if not self.in_project(real) or not self._needs_transpile(real):
            return None
        return PyLayerLoader("__main__", path, self, (os.path.dirname(real), None))

    @staticmethod
    def _needs_transpile(path: str) -> bool:
        try:
            with open(path, "rb") as f:
                return _mentions_pylayer(f.read())
        except OSError:
            return False

    def _unit(self, key: Tuple, rel: str, current: bytes) -> _Unit:
        unit = self._units.get(key)
        if unit is None or unit.sources.get(rel) != current:  # new, or the module was edited
            wanted = self._wanted.setdefault(key, set())
            wanted.add(rel)
            unit = self._units[key] = _Unit(self, key[0], key[1], wanted)
        return unit

    def transpiled(self, key: Tuple, path: str, fullname: str) -> Tuple[bytes, bytes]:
        """The source of the module at `path` and its transpiled form, from the cache or a
        tree-mode run."""
        with open(path, "rb") as f:
            current = f.read()
        with self._lock:
            real = os.path.realpath(path)
            rel = os.path.relpath(real, key[0])
            unit = self._unit(key, rel, current)
            if rel not in unit.sources:
                raise ImportError(f"pylayer2static: {path} is not among the modules found below its "
                                  f"import root {key[0]} (a hidden, skipped or environment directory?)",
                                  name=fullname, path=path)
            entry_key = hashlib.sha256(f"{unit.fingerprint}\0{rel}".encode("utf-8", "surrogateescape")).hexdigest()
            candidates = _cache_paths(real)
            for cache in candidates:
                data = _read_cache(cache, entry_key)
                if data is not None:
                    return current, data
            unit.transpile()
            if unit.failure is not None:
                raise TranspileError(f"pylayer2static could not transpile {fullname}: {unit.failure}",
                                     name=fullname, path=path)
            if rel in unit.errors or rel not in unit.outputs:
                found = "\n".join(unit.errors.get(rel, [])) or f"{path}: no output was written"
                raise TranspileError(f"pylayer2static could not transpile {fullname}:\n{found}",
                                     name=fullname, path=path)
            data = unit.outputs[rel]
            for cache in candidates:
                if _write_cache(cache, entry_key, data):
                    break
            return current, data


def _cache_paths(source: str) -> List[str]:
    """Where the entry of `source` may live: `__pycache__` next to it, then the user cache."""
    stem = os.path.splitext(os.path.basename(source))[0]
    name = f"{stem}.pylayer2static-{_runtime_version()}.py"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = hashlib.sha256(os.path.dirname(source).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return [
        os.path.join(os.path.dirname(source), "__pycache__", name),
        os.path.join(base, "pylayer2static", folder, name),
    ]


def _read_cache(path: str, key: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            if f.readline() != _CACHE_HEADER + key.encode() + b"\n":
                return None
            return f.read()
    except OSError:
        return None


def _write_cache(path: str, key: str, data: bytes) -> bool:
    """Write the entry whole or not at all (temp file in the same directory, then rename)."""
    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # A name of its own per writer; mode 0666 less the umask, as Python's own .pyc files.
        tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as f:
            f.write(_CACHE_HEADER + key.encode() + b"\n" + data)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


class PackageRefused(ValueError):
    """A package named for the hook to transpile that it never transpiles (`_NEVER`)."""


def refuse_never_transpiled(names: Iterable[str], given_by: str) -> None:
    """Raise PackageRefused for the first of `names` whose top-level package the hook never
    transpiles (naming one would otherwise be accepted and transpile nothing); the message
    begins with `given_by` and the name (`--package paddle: ...`)."""
    for name in names:
        top = name.partition(".")[0]
        why = _NEVER_WHY.get(top)
        if why is None:
            continue
        raise PackageRefused(f"{given_by} {name}: {why}; leave it out")


def install_import_hook(packages: Sequence[str] = (), project: Optional[str] = None,
                        binary: Optional[str] = None) -> PyLayerImportHook:
    """Transpile PyLayer modules on import from now on (modules imported before are not touched).

    `project` (default: the current directory) locates the project as the binary does: the
    directory of the nearest pyproject.toml above it with a [tool.pylayer2static] table, else of
    the nearest pyproject.toml, else `project` itself; its modules are transpiled. `packages`
    names installed libraries to transpile too, added to `packages` of that table and
    $P2S_PACKAGES (comma-separated); PackageRefused when one of them is the framework's or this
    tool's own (never transpiled). `binary` overrides the search of `find_binary()`. A second
    call adds to the hook already installed and returns it.
    """
    project = os.getcwd() if project is None else project
    configured = configured_packages(project)
    from_env = [p for p in os.environ.get("P2S_PACKAGES", "").split(",") if p]
    refuse_never_transpiled(packages, "install_import_hook(packages=...) names")
    if configured:
        refuse_never_transpiled(configured, f"packages in {config_file(project)} names")
    refuse_never_transpiled(from_env, "$P2S_PACKAGES names")
    names = list(packages) + configured + from_env
    for finder in sys.meta_path:
        if isinstance(finder, PyLayerImportHook):
            finder.add(project, names)
            return finder
    hook = PyLayerImportHook(project, names, binary)
    at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
    sys.meta_path.insert(at, hook)
    return hook
