#!/bin/sh
# check.sh BIN UNIT_BIN... — every suite of `make check`, then one combined line
# `N passed, N failed`. Exits non-zero if any suite failed or ran nothing.
# After the plain suites come the reliability ones (docs/RELIABILITY.md): unit, golden and CLI
# again against the ASan+UBSan build (build/sanitize, made by mk/reliability.mk), the CLI suite
# against the ThreadSanitizer build (build/tsan) and under valgrind memcheck, the fuzz corpus
# and regression replay, and tests/reliability.
set -u
bin=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
total_passed=0 total_failed=0
started=$(date +%s)
# Each suite's result line and the failure lines of the suites that failed, printed again at
# the end: a CI log is often read from its tail.
summary=$(mktemp)
failures=$(mktemp)
trap 'rm -f "$summary" "$failures"' EXIT

renamed() {  # renamed NEW OLD COMMAND...: runs a suite, its `OLD:` result line renamed to NEW
    new=$1 old=$2
    shift 2
    "$@" 2>&1 | sed "s/^$old: \([0-9]* passed, [0-9]* failed\)/$new: \1/"
}

timed() {  # timed COMMAND...: runs it and prints how long it took
    t0=$(date +%s)
    "$@"
    echo "check: $1 $2 took $(( $(date +%s) - t0 ))s"
}

suite() {  # suite NAME COMMAND...: runs it, adds its `NAME: N passed, N failed` line
    name=$1
    shift
    echo "=== $name"
    log=$(mktemp)
    "$@" 2>&1 | tee "$log"
    line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$log" | tail -n1)
    if [ -z "$line" ]; then
        echo "check: suite $name printed no result"
        echo "check: $name printed no result" >>"$summary"
        echo "--- $name" >>"$failures"
        grep -v XFAIL "$log" | grep -E "FAIL|Error|error:" | head -n 20 >>"$failures"
        rm -f "$log"
        total_failed=$((total_failed + 1))
        return
    fi
    p=$(printf '%s' "$line" | sed 's/.*: \([0-9]*\) passed.*/\1/')
    f=$(printf '%s' "$line" | sed 's/.* \([0-9]*\) failed.*/\1/')
    echo "check: $line" >>"$summary"
    if [ "$f" -ne 0 ]; then
        echo "--- $name" >>"$failures"
        grep -v XFAIL "$log" | grep "FAIL" | grep -v "^$name: [0-9]* passed" | head -n 20 >>"$failures"
    fi
    rm -f "$log"
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
}

suite unit sh "$root/tests/run_unit.sh" "$@"
suite golden sh "$root/tests/golden/run.sh" "$bin"
suite cli sh "$root/tests/cli/run.sh" "$bin"
suite clean sh "$root/tests/check_clean/run.sh" "$bin"
suite e2e sh "$root/tests/e2e/run.sh" "$bin"
timed suite e2e-dist sh "$root/tests/dist/run.sh" "$bin"
timed suite lsp sh "$root/tests/lsp/run.sh" "$bin"
timed suite conformance sh "$root/tests/conformance/run.sh" "$bin"
timed suite docs sh "$root/tests/docs_current.sh"
# ONNX deployment: each exporting e2e case through paddle2onnx and ONNX Runtime on both
# versions, tools in build/onnx-tools (first run: about 10 s of pip), and the onnx table.
timed suite onnx sh "$root/tests/onnx/run.sh" "$bin"
# The pip package: builds the wheel, installs it with paddlepaddle into a fresh venv, runs the
# request's example from that install only (about 1 min on an idle machine, most of it pip).
timed suite wheel sh "$root/tests/wheel/run.sh"

san="$root/build/sanitize"
san_units=""
for t in "$@"; do
    san_units="$san_units $san/tests/$(basename "$t")"
done
if [ -x "$san/pylayer2static" ]; then
    # shellcheck disable=SC2086
    timed suite unit-asan renamed unit-asan unit sh "$root/tests/run_unit.sh" $san_units
    timed suite golden-asan renamed golden-asan golden sh "$root/tests/golden/run.sh" "$san/pylayer2static"
    timed suite cli-asan renamed cli-asan cli sh "$root/tests/cli/run.sh" "$san/pylayer2static"
    timed suite fuzz-replay sh "$root/tests/fuzz/replay.sh" "$san/fuzz"
    timed suite lsp-asan renamed lsp-asan lsp sh "$root/tests/lsp/run.sh" "$san/pylayer2static"
else
    echo "check: no sanitizer build in $san (make sanitize-build); its suites count as failed"
    total_failed=$((total_failed + 5))
fi
if [ -x "$root/build/tsan/pylayer2static" ]; then
    timed suite cli-tsan sh "$root/tests/reliability/cli_wrapped.sh" tsan "$root/build/tsan/pylayer2static"
else
    echo "check: no ThreadSanitizer build in build/tsan (make tsan-build); its suite counts as failed"
    total_failed=$((total_failed + 1))
fi
timed suite cli-valgrind sh "$root/tests/reliability/cli_wrapped.sh" valgrind "$bin"
timed suite lsp-valgrind renamed lsp-valgrind lsp sh "$root/tests/lsp/run.sh" "$bin" --wrap \
    "valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99" \
    -k lsp_valgrind_session
timed suite reliability sh "$root/tests/reliability/run.sh" "$bin"

echo "=== summary"
cat "$summary"
if [ -s "$failures" ]; then
    echo "check: what failed (the first lines of each failing suite):"
    cat "$failures"
fi
echo "check: finished in $(( $(date +%s) - started ))s"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ] && [ "$total_passed" -gt 0 ]
