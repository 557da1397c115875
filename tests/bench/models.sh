#!/bin/sh
# models.sh [OUT] — the model benchmarks on both pinned frameworks (tests/bench/models.py).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-}
[ -n "$out" ] && : > "$out"
for venv in .venv .venv-2.6; do
    if [ -n "$out" ]; then
        "$root/$venv/bin/python" "$root/tests/bench/models.py" "$root/build/pylayer2static" --out "$out"
    else
        "$root/$venv/bin/python" "$root/tests/bench/models.py" "$root/build/pylayer2static"
    fi
done
