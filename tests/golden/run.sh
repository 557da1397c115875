#!/bin/sh
# run.sh BIN — data-driven golden tests. Each directory under tests/golden/ is a case:
#   input.py       the input (run from the case directory, so messages say input.py:L:C)
#   args           optional: extra command-line arguments, one line
#   expected.py    the expected standard output (absent: none is expected)
#   expected.diag  the expected standard error (absent: none)
#   expected.json  optional: the expected standard error under --output-format=json
#   expected.rc    optional: the expected exit code (absent: 0)
# Every output (also one made despite contract errors, which exit 1) must also parse with CPython
# (tree-sitter accepts a superset) and come back unchanged from a second run. UPDATE=1 rewrites
# the expected files from the current binary.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "golden: FAIL $name: $1"
    failed=$((failed + 1))
    ok=0
}

for dir in "$here"/*/; do
    name=$(basename "$dir")
    [ -f "$dir/input.py" ] || continue
    args=""
    [ -f "$dir/args" ] && args=$(cat "$dir/args")
    want_rc=0
    [ -f "$dir/expected.rc" ] && want_rc=$(cat "$dir/expected.rc")
    # shellcheck disable=SC2086
    (cd "$dir" && "$bin" --color=never $args input.py >"$tmp/out" 2>"$tmp/err")
    rc=$?
    # shellcheck disable=SC2086
    (cd "$dir" && "$bin" --output-format=json $args input.py >/dev/null 2>"$tmp/json")
    if [ "${UPDATE:-0}" = 1 ]; then
        if [ -s "$tmp/out" ]; then cp "$tmp/out" "$dir/expected.py"; else rm -f "$dir/expected.py"; fi
        if [ -s "$tmp/err" ]; then cp "$tmp/err" "$dir/expected.diag"; else rm -f "$dir/expected.diag"; fi
        if [ -s "$tmp/err" ]; then cp "$tmp/json" "$dir/expected.json"; else rm -f "$dir/expected.json"; fi
        if [ "$rc" -ne 0 ]; then echo "$rc" > "$dir/expected.rc"; else rm -f "$dir/expected.rc"; fi
        want_rc=$rc
    fi
    ok=1
    [ "$rc" -eq "$want_rc" ] || fail "exit code $rc, expected $want_rc"
    if [ -f "$dir/expected.py" ]; then
        cmp -s "$tmp/out" "$dir/expected.py" || { fail "output differs"; diff "$dir/expected.py" "$tmp/out" | head -20; }
    elif [ -s "$tmp/out" ]; then
        fail "unexpected output"
    fi
    if [ -f "$dir/expected.diag" ]; then
        cmp -s "$tmp/err" "$dir/expected.diag" || { fail "diagnostics differ"; diff "$dir/expected.diag" "$tmp/err" | head -20; }
    elif [ -s "$tmp/err" ]; then
        fail "unexpected diagnostics: $(head -c 300 "$tmp/err")"
    fi
    if [ -f "$dir/expected.json" ]; then
        cmp -s "$tmp/json" "$dir/expected.json" || { fail "JSON diagnostics differ"; diff "$dir/expected.json" "$tmp/json" | head -20; }
    fi
    if [ "$rc" -eq 0 ] || [ -s "$tmp/out" ]; then
        "$python" -c 'import ast,sys; ast.parse(open(sys.argv[1],"rb").read(), sys.argv[1])' "$tmp/out" \
            2>"$tmp/ast" || fail "output does not parse with CPython: $(tail -n1 "$tmp/ast")"
        # shellcheck disable=SC2086
        (cd "$dir" && "$bin" --quiet $args - <"$tmp/out" >"$tmp/again" 2>/dev/null)
        cmp -s "$tmp/out" "$tmp/again" || fail "a second run changes the output"
    fi
    [ "$ok" -eq 1 ] && passed=$((passed + 1))
done
echo "golden: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
