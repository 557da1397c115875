#!/bin/sh
# replay.sh DIR — runs every kept fuzz input through its target's replay driver (DIR/replay_T,
# built under ASan+UBSan): for each target T (transpile, rules, lsp) the seeds copied by
# `make fuzz-seeds` (build/fuzz/seeds-fuzz_T), a committed corpus if any
# (tests/fuzz/corpus/fuzz_T) and every kept crasher (tests/fuzz/regressions/fuzz_T).
# One process per target; if it fails, each input again on its own to name the ones that fail.
# Inputs listed in tests/fuzz/regressions/known.txt break an invariant because of an open
# finding: each runs on its own and is reported XFAIL while it fails, passed once it does not.
# Prints `fuzz-replay: N passed, N failed` (one per input).
set -u
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
list=$(mktemp)
log=$(mktemp)
trap 'rm -f "$list" "$log"' EXIT
known="$here/regressions/known.txt"
passed=0 failed=0 xfailed=0
finding_of() {  # finding_of TARGET/FILE: the finding that keeps it failing, or nothing
    [ -f "$known" ] && sed -n "s|^$1 \(F[0-9]*\)\$|\1|p" "$known" | head -n1
}
for t in transpile rules lsp; do
    bin="$dir/replay_$t"
    : > "$list"
    for d in "$root/build/fuzz/seeds-fuzz_$t" "$here/corpus/fuzz_$t" "$here/regressions/fuzz_$t"; do
        [ -d "$d" ] && find "$d" -type f ! -name '.*' >> "$list"
    done
    # Known failures run on their own, out of the bulk run.
    kept=$(mktemp)
    while IFS= read -r f; do
        rel=fuzz_$t/$(basename "$f")
        finding=""
        case "$f" in "$here/regressions/"*) finding=$(finding_of "$rel") ;; esac
        if [ -z "$finding" ]; then
            printf '%s\n' "$f" >> "$kept"
        elif "$bin" "$f" > "$log" 2>&1; then
            passed=$((passed + 1))
            echo "fuzz-replay: $rel passes now: remove it from known.txt ($finding is fixed?)"
        else
            xfailed=$((xfailed + 1))
            echo "fuzz-replay: XFAIL $rel ($finding): $(grep -E "invariant broken|ERROR: " "$log" | head -n1 | cut -c1-160)"
        fi
    done < "$list"
    mv "$kept" "$list"
    total=$(wc -l < "$list")
    if [ ! -x "$bin" ]; then
        echo "fuzz-replay: FAIL no replay driver $bin (make fuzz-replay-build)"
        failed=$((failed + 1))
    elif [ "$total" -eq 0 ]; then
        echo "fuzz-replay: FAIL no inputs for $t (make fuzz-seeds)"
        failed=$((failed + 1))
    elif tr '\n' '\0' < "$list" | xargs -0 "$bin" > "$log" 2>&1; then
        passed=$((passed + total))
        echo "fuzz-replay: $t: $total inputs"
    else
        while IFS= read -r f; do
            if "$bin" "$f" > "$log" 2>&1; then
                passed=$((passed + 1))
            else
                failed=$((failed + 1))
                echo "fuzz-replay: FAIL $t ${f#"$root"/}"
                grep -E "invariant broken|ERROR: AddressSanitizer|runtime error|LeakSanitizer" "$log" | head -n 3
            fi
        done < "$list"
    fi
done
echo "fuzz-replay: $xfailed known failures (XFAIL, tests/fuzz/regressions/known.txt)"
echo "fuzz-replay: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
