#!/bin/sh
# each_version.sh SCRIPT [-o OUT] [OPTIONS...] — a benchmark script of tests/bench (SCRIPT: its
# file name) on both pinned frameworks, given the transpiler and OPTIONS. Prints the tables, or
# with -o writes them to OUT.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
script=$1
shift
out=
if [ "${1:-}" = "-o" ]; then
    out=$2
    shift 2
    mkdir -p "$(dirname "$out")"
    : > "$out"
fi
for venv in .venv .venv-2.6; do
    "$root/$venv/bin/python" "$root/tests/bench/$script" "$root/build/pylayer2static" ${out:+--out "$out"} "$@"
done
