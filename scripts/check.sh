#!/bin/sh
# check.sh BIN UNIT_BIN... — every suite of `make check`, then one combined line
# `N passed, N failed`. Exits non-zero if any suite failed or ran nothing.
set -u
bin=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
total_passed=0 total_failed=0
started=$(date +%s)

suite() {  # suite NAME COMMAND...: runs it, adds its `NAME: N passed, N failed` line
    name=$1
    shift
    echo "=== $name"
    log=$(mktemp)
    "$@" 2>&1 | tee "$log"
    line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$log" | tail -n1)
    rm -f "$log"
    if [ -z "$line" ]; then
        echo "check: suite $name printed no result"
        total_failed=$((total_failed + 1))
        return
    fi
    p=$(printf '%s' "$line" | sed 's/.*: \([0-9]*\) passed.*/\1/')
    f=$(printf '%s' "$line" | sed 's/.* \([0-9]*\) failed.*/\1/')
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
}

suite unit sh "$root/tests/run_unit.sh" "$@"
suite golden sh "$root/tests/golden/run.sh" "$bin"
suite cli sh "$root/tests/cli/run.sh" "$bin"
suite clean sh "$root/tests/check_clean/run.sh" "$bin"
suite e2e sh "$root/tests/e2e/run.sh" "$bin"

echo "check: finished in $(( $(date +%s) - started ))s"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ] && [ "$total_passed" -gt 0 ]
