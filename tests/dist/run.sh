#!/bin/sh
# run.sh BIN — tests/dist (distributed training under paddle.distributed.launch, 2 CPU ranks)
# on each pinned framework version, then the check that docs/SUPPORT.md's `distributed` table
# matches the run. Prints `e2e-dist: N passed, N failed`; a missing venv fails (never skips).
# `run.sh BIN --write` rewrites the table from the run instead of checking it.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=${2:---check}
root=$(cd "$(dirname "$0")/../.." && pwd)
passed=0 failed=0 summaries=""
for venv in .venv .venv-2.6; do
    py="$root/$venv/bin/python"
    if ! "$py" -c "import paddle" >/dev/null 2>&1; then
        echo "e2e-dist: FAIL $venv has no PaddlePaddle (run 'make venv'); refusing to skip"
        failed=$((failed + 1))
        continue
    fi
    out="$root/build/dist/$(basename "$venv")"
    log=$(mktemp)
    (cd "$root" && "$py" tests/dist/run.py --bin "$bin" --out "$out" 2>&1) | tee "$log"
    line=$(grep -E '^e2e-dist: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
    rm -f "$log"
    if [ -z "$line" ]; then
        echo "e2e-dist: $venv printed no result"
        failed=$((failed + 1))
        continue
    fi
    passed=$((passed + $(printf '%s' "$line" | sed 's/.*: \([0-9]*\) passed.*/\1/')))
    failed=$((failed + $(printf '%s' "$line" | sed 's/.* \([0-9]*\) failed.*/\1/')))
    summaries="$summaries $out/summary.json"
done
# shellcheck disable=SC2086
if (cd "$root" && python3 tests/dist/table.py "$mode" $summaries); then
    passed=$((passed + 1))
else
    echo "e2e-dist: FAIL docs/SUPPORT.md's distributed table ($mode)"
    failed=$((failed + 1))
fi
echo "e2e-dist: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
