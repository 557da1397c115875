#!/bin/sh
# run_unit.sh TEST_BIN... — runs each CMocka test binary; prints `unit: N passed, N failed`.
passed=0 failed=0
for t in "$@"; do
    out=$("$t" 2>&1)
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n1)
    if [ -z "$p$f" ]; then
        echo "unit: $t printed no result (crashed?)"
        f=1
    fi
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
