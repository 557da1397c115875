#!/bin/sh
# run.sh BIN — the end-to-end suite on real PaddlePaddle, once per pinned framework version,
# each in one Python process. Prints `e2e: N passed, N failed`; fails loudly (never skips) if a
# venv or the framework is missing.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
passed=0 failed=0
for venv in .venv .venv-2.6; do
    py="$root/$venv/bin/python"
    if ! "$py" -c "import paddle" >/dev/null 2>&1; then
        echo "e2e: FAIL $venv has no PaddlePaddle (run 'make venv'); refusing to skip"
        failed=$((failed + 1))
        continue
    fi
    version=$("$py" -c "import paddle; print(paddle.__version__)" 2>/dev/null)
    echo "e2e: paddlepaddle $version ($venv)"
    log=$(mktemp)
    (cd "$root" && P2S_BIN="$bin" "$py" -m pytest tests/e2e -q -p no:cacheprovider \
        -W ignore::UserWarning -W ignore::DeprecationWarning 2>&1) | tee "$log" | grep -vE '^\s*$' | tail -n 25
    line=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)' "$log" | tail -n1)
    p=$(printf '%s' "$line" | sed -n 's/.*\b\([0-9][0-9]*\) passed.*/\1/p')
    f=$(printf '%s' "$line" | sed -n 's/.*\b\([0-9][0-9]*\) failed.*/\1/p')
    e=$(printf '%s' "$line" | sed -n 's/.*\b\([0-9][0-9]*\) error.*/\1/p')
    [ -n "$p$f$e" ] || { echo "e2e: $venv ran no test"; f=1; }
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0} + ${e:-0}))
    rm -f "$log"
done
echo "e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
