#!/bin/sh
# run.sh BIN — no check fires on correct code. Every file below must give zero errors and zero
# warnings (notes are allowed) and exit 0:
#   - the samples, the e2e cases, and the golden inputs that are correct (no expected.rc,
#     not a check_* case, which exist to fire);
#   - every .py of the installed paddle packages (.venv, .venv-2.6) that mentions PyLayer;
#   - every .py that mentions PyLayer in the pinned paddlenlp wheel (tests/fetch_paddlenlp.sh), into
#     build/check_clean/ (never committed) and checked against its sha256.
# Prints `clean: N passed, N failed`; each failure names the file and shows its diagnostics.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
work=$root/build/check_clean
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check_file() {   # check_file FILE LABEL
    "$bin" --color=never "$1" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 0 ] && ! grep -q -e ': error\[' -e ': warning\[' "$tmp/err"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "clean: FAIL $2 (exit $rc)"
        grep -A3 -e ': error\[' -e ': warning\[' "$tmp/err" | head -20
    fi
}

# 1. This repository's correct code.
for f in "$root"/samples/*.py "$root"/tests/e2e/cases/*.py; do
    check_file "$f" "${f#"$root"/}"
done
for dir in "$root"/tests/golden/*/; do
    case $(basename "$dir") in check_*) continue ;; esac
    [ -f "$dir/input.py" ] && [ ! -f "$dir/expected.rc" ] || continue
    check_file "$dir/input.py" "${dir#"$root"/}input.py"
done
here_passed=$passed

# 2. The installed paddle packages' own PyLayer classes.
for venv in .venv .venv-2.6; do
    pkg=$(ls -d "$root/$venv"/lib/python*/site-packages/paddle 2>/dev/null | head -n1)
    if [ -z "$pkg" ]; then
        echo "clean: FAIL $venv has no paddle package (make venv)"
        failed=$((failed + 1))
        continue
    fi
    before=$passed
    n=0
    for f in $(grep -rl --include='*.py' PyLayer "$pkg" | sort); do
        n=$((n + 1))
        check_file "$f" "$venv:${f#"$pkg"/}"
    done
    echo "clean: $venv paddle: $n files mentioning PyLayer, $((passed - before)) clean"
done

# 3. A pinned paddlenlp wheel (tests/fetch_paddlenlp.sh).
if wheel=$(sh "$root/tests/fetch_paddlenlp.sh" "$work" 2>"$tmp/fetch"); then
    rm -rf "$work/paddlenlp-src"
    "$python" -m zipfile -e "$wheel" "$work/paddlenlp-src"
    before=$passed
    n=0
    for f in $(grep -rl --include='*.py' PyLayer "$work/paddlenlp-src" | sort); do
        n=$((n + 1))
        check_file "$f" "paddlenlp:${f#"$work/paddlenlp-src"/}"
    done
    echo "clean: $(basename "$wheel"): $n files mentioning PyLayer, $((passed - before)) clean"
else
    echo "clean: FAIL $(cat "$tmp/fetch")"
    failed=$((failed + 1))
fi

echo "clean: repository: $here_passed files clean"
echo "clean: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
