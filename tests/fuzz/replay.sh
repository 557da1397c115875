#!/bin/sh
# replay.sh REPLAY_BIN — runs the fuzz target's inputs through the replay driver (built under
# ASan+UBSan): the seeds (copied by `make fuzz-seeds` into build/fuzz/seeds), the committed
# corpus tests/fuzz/corpus/ and every kept crasher in tests/fuzz/regressions/. One process for
# all of them; if it fails, each input again on its own to name the ones that fail.
# Prints `fuzz-replay: N passed, N failed` (one per input).
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
list=$(mktemp)
log=$(mktemp)
trap 'rm -f "$list" "$log"' EXIT
for d in "$root/build/fuzz/seeds" "$here/corpus" "$here/regressions"; do
    [ -d "$d" ] && find "$d" -type f ! -name '*.md' ! -name '.*' >> "$list"
done
total=$(wc -l < "$list")
passed=0 failed=0
if [ "$total" -eq 0 ]; then
    echo "fuzz-replay: no inputs (run 'make fuzz-seeds')"
    failed=1
elif tr '\n' '\0' < "$list" | xargs -0 "$bin" > "$log" 2>&1; then
    passed=$total
else
    while IFS= read -r f; do
        if "$bin" "$f" > "$log" 2>&1; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "fuzz-replay: FAIL ${f#"$root"/}"
            grep -E "invariant broken|ERROR: AddressSanitizer|runtime error|LeakSanitizer" "$log" | head -n 3
        fi
    done < "$list"
fi
echo "fuzz-replay: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
