#!/bin/sh
# construction.sh [-o OUT] [OPTIONS...] — how long transpiled models take to build their static
# graphs against their built-in twins, on both pinned frameworks (tests/bench/construction.py,
# which takes OPTIONS: --repeat N, --models NAME...). Prints the tables, or with -o writes them to OUT.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=
if [ "${1:-}" = "-o" ]; then
    out=$2
    shift 2
    mkdir -p "$(dirname "$out")"
    : > "$out"
fi
for venv in .venv .venv-2.6; do
    "$root/$venv/bin/python" "$root/tests/bench/construction.py" "$root/build/pylayer2static" ${out:+--out "$out"} "$@"
done
