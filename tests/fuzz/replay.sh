#!/bin/sh
# replay.sh DIR — runs every kept fuzz input through its target's replay driver (DIR/replay_T,
# built under ASan+UBSan): for each target T (transpile, rules) the seeds copied by
# `make fuzz-seeds` (build/fuzz/seeds-fuzz_T), a committed corpus if any
# (tests/fuzz/corpus/fuzz_T) and every kept crasher (tests/fuzz/regressions/fuzz_T).
# One process per target; if it fails, each input again on its own to name the ones that fail.
# Prints `fuzz-replay: N passed, N failed` (one per input).
set -u
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
list=$(mktemp)
log=$(mktemp)
trap 'rm -f "$list" "$log"' EXIT
passed=0 failed=0
for t in transpile rules; do
    bin="$dir/replay_$t"
    : > "$list"
    for d in "$root/build/fuzz/seeds-fuzz_$t" "$here/corpus/fuzz_$t" "$here/regressions/fuzz_$t"; do
        [ -d "$d" ] && find "$d" -type f ! -name '.*' >> "$list"
    done
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
echo "fuzz-replay: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
