#!/bin/sh
# run.sh BIN [--check|--write] — ONNX deployment (run.py) on each pinned framework version, then
# the check that docs/SUPPORT.md's `onnx` table matches the run (--write rewrites it instead).
# Makes its tools first (`make onnx-tools`: build/onnx-tools, never the Paddle venvs). Prints
# `onnx: N passed, N failed`; a missing venv fails (never skips).
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=${2:---check}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/suite_counts.sh"
t_start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! (cd "$root" && make -s onnx-tools) >"$log" 2>&1; then
    echo "onnx: FAIL make onnx-tools"
    tail -n 30 "$log"
    echo "onnx: 0 passed, 1 failed"
    exit 1
fi
for venv in .venv .venv-2.6; do
    py="$root/$venv/bin/python"
    has_paddle onnx "$py" || continue
    out="$root/build/onnx/$(basename "$venv")"
    (cd "$root" && GLOG_minloglevel=2 "$py" -W ignore tests/onnx/run.py --bin "$bin" --tools "$root/build/onnx-tools" \
        --out "$out" 2>&1) | tee "$log"
    add_counts onnx "$log" "$venv" || continue
    summaries="$summaries $out/summary.json"
done
# shellcheck disable=SC2086
count_check onnx "docs/SUPPORT.md's onnx table ($mode)" python3 tests/onnx/table.py "$mode" $summaries
echo "onnx: finished in $(( $(date +%s) - t_start ))s"
echo "onnx: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
