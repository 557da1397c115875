#!/bin/sh
# twins.sh [-o OUT] [OPTIONS...] — transpiled PyLayer models against their built-in twins on
# both pinned frameworks (tests/bench/twins.py, which takes OPTIONS: --repeat N, --turn S).
# Prints the tables, or with -o writes them to OUT.
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
    "$root/$venv/bin/python" "$root/tests/bench/twins.py" "$root/build/pylayer2static" ${out:+--out "$out"} "$@"
done
