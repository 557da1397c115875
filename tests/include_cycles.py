"""include_cycles.py SRC_DIR — fails on an include cycle among the modules of SRC_DIR.

A module is a name with src/NAME.c or src/NAME.h; module A depends on B when A.c or A.h
includes "B.h". Prints the first cycle found as `a -> b -> a` and exits 1; prints `no include
cycle among N modules` and exits 0 otherwise. Run by tests/cli/run.sh.
"""
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)\.h"', re.MULTILINE)


def dependencies(src: Path) -> dict:
    """Each module's set of modules it includes (itself left out)."""
    deps: dict = {}
    for path in sorted(src.glob("*.[ch]")):
        module = path.stem
        found = deps.setdefault(module, set())
        found.update(m for m in INCLUDE.findall(path.read_text(errors="replace")) if m != module)
    return deps


def find_cycle(deps: dict) -> list:
    """A cycle as a path that ends where it starts, or [] when there is none."""
    state: dict = {}  # module -> 1 on the current path, 2 done
    path: list = []

    def visit(module: str) -> list:
        state[module] = 1
        path.append(module)
        for dep in sorted(deps.get(module, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        path.pop()
        state[module] = 2
        return []

    for module in sorted(deps):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return []


def main() -> int:
    deps = dependencies(Path(sys.argv[1]))
    cycle = find_cycle(deps)
    if cycle:
        print("include cycle: " + " -> ".join(cycle))
        return 1
    print(f"no include cycle among {len(deps)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
