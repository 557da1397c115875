"""The CPython baseline of `make bench`: `ast.parse` + `ast.unparse` of every .py under SRC,
written to the same place under OUT (what any transpiler written in Python pays at least)."""
import ast
import os
import sys


def main(src, out):
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                text = f.read()
            try:
                result = ast.unparse(ast.parse(text, path))
            except SyntaxError:
                result = text.decode("utf-8", "replace")
            dest = os.path.join(out, os.path.relpath(path, src))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w") as f:
                f.write(result)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
