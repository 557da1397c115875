#!/bin/sh
# run.sh BIN [--check|--write] — ONNX deployment (run.py) on each pinned framework version, then
# the check that docs/SUPPORT.md's `onnx` table matches the run (--write rewrites it instead).
# Makes its tools first (`make onnx-tools`: build/onnx-tools, never the Paddle venvs). Prints
# `onnx: N passed, N failed`; a missing venv fails (never skips).
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=${2:---check}
root=$(cd "$(dirname "$0")/../.." && pwd)
passed=0 failed=0 summaries=""
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
    if ! "$py" -c "import paddle" >/dev/null 2>&1; then
        echo "onnx: FAIL $venv has no PaddlePaddle (run 'make venv'); refusing to skip"
        failed=$((failed + 1))
        continue
    fi
    out="$root/build/onnx/$(basename "$venv")"
    (cd "$root" && GLOG_minloglevel=2 "$py" -W ignore tests/onnx/run.py --bin "$bin" --tools "$root/build/onnx-tools" \
        --out "$out" 2>&1) | tee "$log"
    line=$(grep -E '^onnx: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
    if [ -z "$line" ]; then
        echo "onnx: $venv printed no result"
        failed=$((failed + 1))
        continue
    fi
    passed=$((passed + $(printf '%s' "$line" | sed 's/.*: \([0-9]*\) passed.*/\1/')))
    failed=$((failed + $(printf '%s' "$line" | sed 's/.* \([0-9]*\) failed.*/\1/')))
    summaries="$summaries $out/summary.json"
done
# shellcheck disable=SC2086
if (cd "$root" && python3 tests/onnx/table.py "$mode" $summaries); then
    passed=$((passed + 1))
else
    echo "onnx: FAIL docs/SUPPORT.md's onnx table ($mode)"
    failed=$((failed + 1))
fi
echo "onnx: finished in $(( $(date +%s) - t_start ))s"
echo "onnx: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
