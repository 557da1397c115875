#!/bin/sh
# run.sh BIN — tests/dist (distributed training under paddle.distributed.launch, 2 CPU ranks)
# on each pinned framework version, then the check that docs/SUPPORT.md's `distributed` table
# matches the run. Prints `e2e-dist: N passed, N failed`; a missing venv fails (never skips).
# `run.sh BIN --write` rewrites the table from the run instead of checking it.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=${2:---check}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/suite_counts.sh"
for venv in .venv .venv-2.6; do
    py="$root/$venv/bin/python"
    has_paddle e2e-dist "$py" || continue
    out="$root/build/dist/$(basename "$venv")"
    log=$(mktemp)
    (cd "$root" && "$py" tests/dist/run.py --bin "$bin" --out "$out" 2>&1) | tee "$log"
    counted=0
    add_counts e2e-dist "$log" "$venv" && counted=1
    rm -f "$log"
    [ "$counted" -eq 1 ] || continue
    summaries="$summaries $out/summary.json"
done
# shellcheck disable=SC2086
count_check e2e-dist "docs/SUPPORT.md's distributed table ($mode)" python3 tests/dist/table.py "$mode" $summaries
echo "e2e-dist: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
