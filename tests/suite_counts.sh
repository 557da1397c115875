# suite_counts.sh — sourced by the suites that run a Python driver once per Paddle venv
# (tests/dist/run.sh, tests/onnx/run.sh): the venv check and the counting of each driver's
# `NAME: N passed, N failed` line into $passed and $failed, and of the doc table check.
# Sourcing starts the counts, and $summaries (the drivers' summary files) empty.
passed=0 failed=0 summaries=""

# has_paddle NAME PYTHON: true when PYTHON imports paddle; else counts a failure, says so.
has_paddle() {
    if "$2" -c "import paddle" >/dev/null 2>&1; then
        return 0
    fi
    echo "$1: FAIL $2 has no PaddlePaddle (run 'make venv'); refusing to skip"
    failed=$((failed + 1))
    return 1
}

# add_counts NAME LOG LABEL: adds LOG's last `NAME: N passed, N failed` line to $passed and
# $failed; when it has none, counts a failure, says so (naming LABEL) and returns 1.
add_counts() {
    line=$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$2" | tail -n1)
    if [ -z "$line" ]; then
        echo "$1: $3 printed no result"
        failed=$((failed + 1))
        return 1
    fi
    passed=$((passed + $(printf '%s' "$line" | sed 's/.*: \([0-9]*\) passed.*/\1/')))
    failed=$((failed + $(printf '%s' "$line" | sed 's/.* \([0-9]*\) failed.*/\1/')))
}

# count_check NAME WHAT COMMAND...: runs COMMAND (a doc table's --check or --write) from the
# repository root ($root); one pass, or one failure saying `NAME: FAIL WHAT`.
count_check() {
    name=$1 what=$2
    shift 2
    if (cd "$root" && "$@"); then
        passed=$((passed + 1))
    else
        echo "$name: FAIL $what"
        failed=$((failed + 1))
    fi
}
