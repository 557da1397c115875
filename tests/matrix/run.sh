#!/bin/sh
# run.sh [--write|--check] BIN — the framework-version matrix (`make matrix`, before a release;
# not part of `make check`, whose two pinned versions keep CI within its time).
# For every released paddlepaddle CPU build from 2.6.2 on, the newest patch of each minor
# (tests/matrix/versions.py reads them from the package index; P2S_MATRIX_VERSIONS overrides):
#   - a venv with that framework: the pinned .venv / .venv-2.6 serve their own versions, every
#     other one is build/matrix/venv-X.Y.Z, made once by scripts/venv.sh from the pinned
#     requirements of its major line with the paddlepaddle pin changed (cached: a ready stamp
#     and the requirements it was made from; remade only when those change);
#   - the e2e suite (tests/e2e, as tests/e2e/run.sh runs it), the conformance suite
#     (tests/conformance/run.sh BIN --venv DIR) and tests/e2e/support_matrix.py (into
#     build/matrix/X.Y.Z/support.md: the per-case table of that version, and its summary; its
#     cells in build/matrix/X.Y.Z/X.Y.Z.json, not in the repository's docs/support-data/);
# then the table of docs/SUPPORT.md's `all-versions` section (tests/matrix/support_table.py):
# --write rewrites it, --check exits 1 with a diff when the committed one differs, neither
# prints it. Ends with `matrix: N passed, N failed` (one per version and suite); exits 1 on
# any failure. Logs: build/matrix/X.Y.Z/.
set -u
mode=print
case ${1:-} in --write|--check) mode=${1#--}; shift ;; esac
if [ $# -ne 1 ]; then
    echo "usage: $0 [--write|--check] BIN" >&2
    exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
out=$root/build/matrix
mkdir -p "$out"
cd "$root"
started=$(date +%s)
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "matrix: FAIL $1"; }

versions=$("$python" tests/matrix/versions.py) || { echo "matrix: 0 passed, 1 failed"; exit 1; }
echo "matrix: paddlepaddle $versions"
pinned() {  # pinned FILE: the paddlepaddle version a requirements file pins
    sed -n 's/^paddlepaddle==//p' "$1"
}

for v in $versions; do
    t0=$(date +%s)
    dir=$out/$v
    rm -rf "$dir"
    mkdir -p "$dir"
    major=${v%%.*}
    case $major in 2) base=tests/requirements-paddle2.txt pin=.venv-2.6 ;; *) base=tests/requirements-paddle3.txt pin=.venv ;; esac
    if [ "$(pinned $base)" = "$v" ]; then
        venv=$pin
        [ -f "$venv/.p2s-ready" ] || sh scripts/venv.sh "$venv" "$base" >"$dir/venv.log" 2>&1
    else
        venv=build/matrix/venv-$v
        sed "s/^paddlepaddle==.*/paddlepaddle==$v/" "$base" > "$dir/requirements.txt"
        if [ ! -f "$venv/.p2s-ready" ] || ! cmp -s "$dir/requirements.txt" "$venv/.p2s-requirements"; then
            rm -f "$venv/.p2s-ready"
            if sh scripts/venv.sh "$venv" "$dir/requirements.txt" >"$dir/venv.log" 2>&1; then
                cp "$dir/requirements.txt" "$venv/.p2s-requirements"
            fi
        fi
    fi
    py=$root/$venv/bin/python
    if [ ! -f "$venv/.p2s-ready" ] || [ "$("$py" -c 'import paddle; print(paddle.__version__)' 2>/dev/null)" != "$v" ]; then
        fail "$v: no venv with paddlepaddle $v ($venv; see $dir/venv.log)"
        failed=$((failed + 2))  # its e2e and conformance count as failed too
        echo "$venv" > "$dir/venv"
        continue
    fi
    echo "$venv" > "$dir/venv"
    "$py" -c 'import platform; print(platform.python_version())' > "$dir/python"

    t1=$(date +%s)
    if P2S_BIN="$bin" "$py" -m pytest tests/e2e -q -p no:cacheprovider -W ignore::UserWarning \
            -W ignore::DeprecationWarning --junitxml="$dir/e2e.xml" >"$dir/e2e.log" 2>&1; then
        pass
    else
        fail "$v: e2e ($(tail -n 1 "$dir/e2e.log"); $dir/e2e.log)"
    fi
    t2=$(date +%s)
    if [ -f tests/conformance/run.sh ]; then
        if sh tests/conformance/run.sh "$bin" --venv "$venv" >"$dir/conformance.log" 2>&1; then
            pass
        else
            fail "$v: conformance ($(tail -n 1 "$dir/conformance.log"); $dir/conformance.log)"
        fi
    else
        echo "no tests/conformance/run.sh" > "$dir/conformance.log"
        fail "$v: conformance (no tests/conformance/run.sh)"
    fi
    t3=$(date +%s)
    if "$py" tests/e2e/support_matrix.py --bin "$bin" --doc "$dir/support.md" --data "$dir" >"$dir/support.log" 2>&1; then
        pass
    else
        fail "$v: support_matrix.py ($dir/support.log)"
    fi
    t4=$(date +%s)
    echo "matrix: paddlepaddle $v ($venv): $(tail -n 1 "$dir/e2e.log" | sed 's/^=* *//; s/ *=*$//') in e2e ($((t2 - t1))s)," \
         "conformance $(grep -E '^conformance: [0-9]+ passed' "$dir/conformance.log" | tail -n 1 | sed 's/^conformance: //') ($((t3 - t2))s)," \
         "support table $((t4 - t3))s; $((t4 - t0))s in all"
done

"$python" tests/matrix/support_table.py --$mode "$out" $versions || fail "docs/SUPPORT.md all-versions table ($mode)"
echo "matrix: finished in $(( $(date +%s) - started ))s"
echo "matrix: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
