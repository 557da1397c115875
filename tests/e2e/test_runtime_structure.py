"""The runtime's structure, read off its source with `ast` (docs/ARCHITECTURE.md, The runtime):
no import cycle among its modules, a core that imports no framework, framework probes and IR
branches only where they belong, and no build state in class attributes or module globals."""
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


# The runtime's layers in docs/ARCHITECTURE.md's order (The runtime): a module imports modules
# of its own layer and of the layers before it only. By dotted name below the package; a name
# ending in "." is a package's modules; the build is every module no other layer names.
LAYERS = [
    ("core", ("core.",)),
    ("the framework's seams", ("framework", "patch")),
    ("the build", ()),
    ("one package per IR", ("pir", "pir.", "legacy", "legacy.")),
    ("the install step", ("install",)),
    ("pylayer2static run", ("project", "importhook", "run", "launch_worker.")),
]


def _layer(module: str) -> int:
    if module == PACKAGE:
        return len(LAYERS)  # the package's __init__: the entry points and the install, on top
    name = module[len(PACKAGE) + 1:]
    for index, (_, names) in enumerate(LAYERS):
        if any(name.startswith(n) if n.endswith(".") else name == n for n in names):
            return index
    return next(index for index, (_, names) in enumerate(LAYERS) if not names)


def test_each_layer_imports_only_its_own_and_the_ones_before_it() -> None:
    upward = [f"{module} ({LAYERS[_layer(module)][0] if module != PACKAGE else 'the package'}) imports "
              f"{edge} ({LAYERS[_layer(edge)][0]})"
              for module, edges in sorted(_graph().items()) for edge in sorted(edges) if _layer(edge) > _layer(module)]
    assert not upward, upward


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
        if relative.startswith(PROBES_ALLOWED):
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


# Container methods that change their container in place.
_MUTATORS = frozenset({"append", "extend", "extendleft", "insert", "add", "update", "setdefault", "pop",
                       "popitem", "popleft", "remove", "discard", "clear", "sort", "reverse",
                       "__setitem__", "__delitem__"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

# Module-level state that functions write, each with why it is no build's state: registries
# filled once per process (or per import of a module, per export loaded), and memos whose
# value is a function of their key alone, so any build may read what another left.
MODULE_STATE_ALLOWED = {
    "adapter.py:_IRS": "each IR's adapter, registered once per process by install.install()",
    "builders.py:_BUILDERS": "the builder registry: a generated module registers each class's builder once, "
                             "as it is imported",
    "core/records.py:LOADED": "the call records of the exports `paddle.jit.load` read in this process",
    "convert.py:_CONVERTED": "a memo: each function's converted form, weakly keyed by the function",
    "frames.py:_outers": "a memo: the lines above a call, keyed by every frame's code and line",
    "inplace.py:_FOLLOWERS": "a memo: an in-place API's follower, made again when the API object changes",
    "legacy/adapter.py:_stacks": "a memo: an op's call stack, keyed by the body and every frame's code and line",
    "legacy/blocks.py:_block_attrs": "a memo: an op type's block attributes, which are its proto's",
    "replay.py:_recorded": "a memo: the recordings by call key, which holds all a recording depends on "
                           "(the program and its tape epoch among it: replay.call_key)",
}


def _own_nodes(function: ast.AST) -> List[ast.AST]:
    """The nodes of a function's own scope: nested functions and classes are theirs."""
    nodes, stack = [], list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        nodes.append(node)
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return nodes


def _module_state_writes(tree: ast.Module) -> List[str]:
    """Writes from a function to the module's state, as `NAME:line`: a name its `global`
    statement declares and it binds, and a module-level value (a name the module assigns)
    changed in place where the function does not bind that name itself: `X[k] = v`,
    `X.attr = v`, `del X[k]`, `X[k] += v`, `X.append(...)`, `X.update(...)`..."""
    module_names = {leaf.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    for leaf in ast.walk(target) if isinstance(leaf, ast.Name)}
    writes = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        nodes = _own_nodes(function)
        declared = {name for node in nodes if isinstance(node, ast.Global) for name in node.names}
        arguments = function.args
        local = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
        local |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        local |= {node.id for node in nodes if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
        local |= {node.name for node in nodes if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        local |= {(alias.asname or alias.name).split(".")[0] for node in nodes
                  if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
        local -= declared
        for node in nodes:
            changed = None
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and node.id in declared:
                changed = node
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
                changed = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
                changed = node.func.value
            while isinstance(changed, (ast.Subscript, ast.Attribute)):
                changed = changed.value
            if isinstance(changed, ast.Name) and (changed.id in declared or
                                                  (changed.id in module_names and changed.id not in local)):
                writes.append(f"{changed.id}:{node.lineno}")
    return writes


def test_module_state_writes_are_found() -> None:
    tree = ast.parse(
        "_program = [None, 0]\n_seen = {}\n_count = 0\n_LOG = print\n"
        "def forget():\n    _program[:] = [None, _program[1] + 1]\n"
        "def note(key):\n    _seen.setdefault(key, []).append(1)\n    _seen[key][0] += 1\n"
        "def bump():\n    global _count\n    _count += 1\n"
        "def local(_seen):\n    _seen[1] = 2\n    x = {}\n    x['a'] = 1\n    _LOG('no write')\n"
        "def outer():\n    def inner():\n        del _seen['a']\n    return inner\n"
    )
    assert sorted(_module_state_writes(tree)) == sorted(
        ["_program:6", "_seen:8", "_seen:9", "_count:12", "_seen:20"])


def test_no_build_state_in_module_globals() -> None:
    """No function writes its module's globals (a build's state goes in core/scope.py, or on the
    program, as pir/tape.py's tape epoch), but for the registries and memos allowed above."""
    found, allowed_seen = [], set()
    for module, path in _modules().items():
        relative = os.path.relpath(path, RUNTIME).replace(os.sep, "/")
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for write in _module_state_writes(tree):
            key = f"{relative}:{write.split(':')[0]}"
            if key in MODULE_STATE_ALLOWED:
                allowed_seen.add(key)
            else:
                found.append(f"{relative}:{write.split(':')[1]} writes {write.split(':')[0]}")
    assert not found, f"module globals written by functions: {found}; a build's state goes in core/scope.py"
    assert allowed_seen == set(MODULE_STATE_ALLOWED), \
        f"allowed but no longer written (drop them): {set(MODULE_STATE_ALLOWED) - allowed_seen}"
