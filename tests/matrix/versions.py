"""versions.py — the paddlepaddle releases `make matrix` runs: from 2.6.2 on, the newest patch
release of each minor line, read from the package index (`pip index versions paddlepaddle`,
final releases only). Prints them oldest first, one line. Exits 1 when the index cannot be read
(the matrix never runs on a guessed list); P2S_MATRIX_VERSIONS="2.6.2 3.3.1" overrides it.
"""
import os
import re
import subprocess
import sys

OLDEST = (2, 6, 2)


def parse(text):
    m = re.search(r"^Available versions: (.*)$", text, re.M)
    if not m:
        return None
    found = []
    for v in m.group(1).split(","):
        v = v.strip()
        if re.fullmatch(r"\d+\.\d+\.\d+", v):
            found.append(tuple(int(x) for x in v.split(".")))
    return found


def newest_per_minor(versions):
    best = {}
    for v in versions:
        if v >= OLDEST and v > best.get(v[:2], (0, 0, -1)):
            best[v[:2]] = v
    return [".".join(map(str, best[k])) for k in sorted(best)]


def main():
    override = os.environ.get("P2S_MATRIX_VERSIONS", "").split()
    if override:
        print(" ".join(override))
        return 0
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "paddlepaddle",
                           "--disable-pip-version-check"], capture_output=True, text=True)
    versions = parse(proc.stdout)
    if proc.returncode != 0 or not versions:
        sys.stderr.write("matrix: could not read paddlepaddle's versions from the package index "
                         "(pip index versions paddlepaddle):\n" + proc.stdout + proc.stderr)
        return 1
    print(" ".join(newest_per_minor(versions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
