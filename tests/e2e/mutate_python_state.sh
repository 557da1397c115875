#!/bin/sh
# mutate_python_state.sh BIN — each fix of docs/DESIGN.md "Python state in bodies" broken in turn,
# in a copy of the runtime put first on PYTHONPATH (the tree is never touched): the models of
# tests/e2e/test_python_state.py that cover it must then fail, on each pinned version. Prints
# `mutations: N passed, N failed` (a mutation passes when the tests catch it). `make mutations`.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# selected VENV SELECTION: whether the tests SELECTION pass on VENV with the copy in $work/runtime
selected() {
    (cd "$root" && PYTHONPATH="$work/runtime" P2S_BIN="$bin" "$root/$1/bin/python" -m pytest \
        tests/e2e/test_python_state.py -q -p no:cacheprovider -W ignore::UserWarning \
        -W ignore::DeprecationWarning -k "$2" >/dev/null 2>&1)
}

# The copy as it is passes: a mutation's failure is the mutation's.
rm -rf "$work/runtime" && cp -r "$root/runtime" "$work/runtime"
for venv in .venv .venv-2.6; do
    if selected "$venv" "not support"; then
        echo "mutations: the runtime's copy passes ($venv)"
        passed=$((passed + 1))
    else
        echo "mutations: FAIL the runtime's copy, unmutated, fails its tests ($venv)"
        failed=$((failed + 1))
    fi
done

# mutate NAME FILE FROM TO SELECTION [VENVS]: FILE (under the runtime package) with the line FROM
# made TO; the tests SELECTION must fail on each venv of VENVS (default: both)
mutate() {
    name=$1 file=$2 from=$3 to=$4 selection=$5 venvs=${6:-.venv .venv-2.6}
    rm -rf "$work/runtime" && cp -r "$root/runtime" "$work/runtime"
    target="$work/runtime/pylayer2static_runtime/$file"
    FROM="$from" TO="$to" python3 - "$target" <<'EOF' || { echo "mutations: FAIL $name: its line is gone"; failed=$((failed + 1)); return; }
import os, sys
path = sys.argv[1]
text = open(path).read()
if text.count(os.environ["FROM"]) != 1:
    sys.exit(1)
open(path, "w").write(text.replace(os.environ["FROM"], os.environ["TO"]))
EOF
    for venv in $venvs; do
        if selected "$venv" "$selection"; then
            echo "mutations: FAIL $name ($venv): the tests still pass"
            failed=$((failed + 1))
        else
            echo "mutations: $name ($venv) caught"
            passed=$((passed + 1))
        fi
    done
}

mutate "class attribute written on the stand-in" dy2static.py \
    '    if cls is None or _INITIALISING in self.__dict__ or name in self.__dict__ or name.startswith("_p2s_"):' \
    '    if True:' "InitOnceQuant and not support"
mutate "lambda patched onto paddle.Tensor converted" dy2static.py \
    '        if _is_lambda(identity):' '        if False:' "SplitGate and not support"
mutate "stop_gradient flipped in forward ignored" op.py \
    '        self._flipped_inputs([' '        (lambda flipped: None)([' "Unpermute and not support"
mutate "calls alike replayed whatever their bodies read" core/purity.py \
    '    return _reads(fn, True)' '    return ()' "(InitOnceQuant or RoutedStats) and not support"
# SOT records PyLayer calls only where the release has `paddle.jit.marker.unified` (3.3.1); on
# 2.6.2 every call runs eagerly, so only the 3.3.1 run can catch these two
mutate "SOT keeps a writing forward in its graph" sot.py \
    '    write = writes.first_write(cls.forward, objects)' '    write = None' "(InitOnceQuant or RoutedStats) and not support" .venv
mutate "SOT keeps a forward writing an object passed to apply in its graph" op.py \
    '            sot.check_repeatable(self.cls, self._python_objects(adapter.is_tensor))' \
    '            sot.check_repeatable(self.cls, ())' "CountedRouter and not support" .venv
mutate "SOT ignores its pending writes" sot.py \
    '    if _reads_changing_state(cls) and _pending_side_effects():' '    if False:' "ConfigClip and not support" .venv
echo "mutations: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
