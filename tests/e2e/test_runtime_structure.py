"""The runtime's structure, read off its source with `ast` (docs/ARCHITECTURE.md, The runtime):
no import cycle among its modules, a core that imports no framework, and framework probes and
IR branches only where they belong."""
import ast
import os
import sys
from typing import Dict, List, Optional, Set

import pylayer2static_runtime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from include_cycles import find_cycle  # noqa: E402  (tests/include_cycles.py: the same check for src/)

RUNTIME = os.path.dirname(pylayer2static_runtime.__file__)
PACKAGE = "pylayer2static_runtime"
# Where a branch on the framework's release or IR may be (framework.py says so).
PROBES_ALLOWED = ("framework.py", "install.py", "patch.py", "pir/", "legacy/")


def _modules() -> Dict[str, str]:
    """Every runtime module by dotted name, with its file."""
    found = {}
    for folder, _, files in os.walk(RUNTIME):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, os.path.dirname(RUNTIME))[: -len(".py")]
                dotted = relative.replace(os.sep, ".")
                found[dotted[: -len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return found


def _resolve(module: str, is_package: bool, level: int, target: Optional[str]) -> str:
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _imports(module: str, path: str, modules: Dict[str, str]) -> Set[str]:
    """The runtime modules `module` imports, at its top or inside a function."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    is_package = path.endswith("__init__.py")
    edges: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            edges.update(alias.name for alias in node.names if alias.name.startswith(PACKAGE))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve(module, is_package, node.level, node.module)
            elif node.module and node.module.startswith(PACKAGE):
                base = node.module
            else:
                continue
            for alias in node.names:
                edges.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {edge for edge in edges if edge in modules and edge != module}


def _graph() -> Dict[str, Set[str]]:
    modules = _modules()
    return {module: _imports(module, path, modules) for module, path in modules.items()}


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_reads_relative_imports() -> None:
    graph = _graph()
    assert f"{PACKAGE}.core.scope" in graph[f"{PACKAGE}.op"]
    assert f"{PACKAGE}.pir.ops" in graph[f"{PACKAGE}.pir.hooks"]
    assert f"{PACKAGE}.builders" in graph[f"{PACKAGE}.pir.reload"]


def test_no_import_cycle_among_runtime_modules() -> None:
    cycle = find_cycle(_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def _imports_paddle(path: str) -> bool:
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "paddle" for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "paddle":
            return True
    return False


def test_the_core_imports_no_framework() -> None:
    """core/ (call layout, structure, errors, records, the build scope) imports nothing
    outside core/ and no paddle; op.py, the build steps, imports no paddle of its own."""
    graph, modules = _graph(), _modules()
    core = [module for module in graph if module.startswith(f"{PACKAGE}.core")]
    assert core
    for module in core:
        assert not _imports_paddle(modules[module]), module
        outside = {edge for edge in graph[module] if not edge.startswith(f"{PACKAGE}.core")}
        assert not outside, f"{module} imports {outside}"
    assert not _imports_paddle(modules[f"{PACKAGE}.op"])


def test_framework_probes_only_where_they_belong() -> None:
    """Outside the per-IR packages, framework.py, install.py and the patch table, no module asks
    which IR is being built or tries an import that fails on some releases."""
    for module, path in _modules().items():
        relative = os.path.relpath(path, RUNTIME).replace(os.sep, "/")
        if relative.startswith(PROBES_ALLOWED) or relative == "importhook.py":  # importhook: Python's tomllib
            continue
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler) and isinstance(node.type, ast.Name):
                assert node.type.id != "ImportError" or relative == "core/records.py", f"{relative}:{node.lineno}"
            if isinstance(node, ast.Attribute) and node.attr == "in_pir_mode":
                raise AssertionError(f"{relative}:{node.lineno} asks in_pir_mode")


def _class_attribute_writes(tree: ast.Module) -> List[str]:
    """`Class.attr = ...` (or `+=`) anywhere in a module, for a class the module defines."""
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    writes = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        for target in targets:
            for leaf in (target.elts if isinstance(target, ast.Tuple) else [target]):
                if isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id in classes:
                    writes.append(f"{leaf.value.id}.{leaf.attr}")
    return writes


def test_class_attribute_writes_are_found() -> None:
    tree = ast.parse("class _Building:\n    depth = 0\ndef f():\n    _Building.depth += 1\n    _Building.a, x = 1, 2\n")
    assert _class_attribute_writes(tree) == ["_Building.depth", "_Building.a"]


def test_build_state_lives_in_the_build_scope() -> None:
    """No module keeps state in its own classes' attributes (the `_Building`-style holders the
    build scope replaced), but the one cache of in-place APIs found (inplace.py `_LastSwaps`)."""
    for module, path in _modules().items():
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        writes = [write for write in _class_attribute_writes(tree) if not write.startswith("_LastSwaps.")]
        assert not writes, f"{module} keeps state in {writes}; a build's state goes in core/scope.py"
