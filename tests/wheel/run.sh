#!/bin/sh
# run.sh — the pip package end to end. Builds the wheel (`make wheel`), installs it into a fresh
# venv outside the repository together with the released paddlepaddle of
# tests/requirements-paddle3.txt, and from that install only (python -I, run from a temp dir,
# no PYTHONPATH; the venv never sees the repo's runtime or build/) checks: the `pylayer2static`
# command on PATH, `python -m pylayer2static`, the importable runtime, one version everywhere,
# a binary that needs only the C library, and the request's example (samples/cus_tanh_full.py)
# transpiled by the installed command and run by samples/demo.py as `make demo` does: trained
# eagerly and as static graphs, saved, loaded, predicted, compared; and the same example run
# without a copy by `python -m pylayer2static run` (the import hook, the binary found by the
# installed package).
# Prints `wheel: N passed, N failed`. WHEEL_PADDLE_REQ=FILE picks another requirements file.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
req=${WHEEL_PADDLE_REQ:-$root/tests/requirements-paddle3.txt}
passed=0 failed=0
tmp=$(mktemp -d /tmp/p2s-wheel-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
t_start=$(date +%s)

ok() { passed=$((passed + 1)); echo "wheel: ok   $1"; }
ko() { failed=$((failed + 1)); echo "wheel: FAIL $1"; [ -z "${2:-}" ] || sed 's/^/    /' "$2" | tail -n 30; }
finish() {
    echo "wheel: finished in $(( $(date +%s) - t_start ))s"
    echo "wheel: $passed passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
    exit $?
}

want=$(sed -n 's/^#define P2S_VERSION "\(.*\)"$/\1/p' "$root/src/version.h")

# 1. build
t0=$(date +%s)
if (cd "$root" && make -s wheel) >"$tmp/build.log" 2>&1; then
    whl=$(ls "$root"/dist/pylayer2static-*.whl 2>/dev/null)
    case $whl in
        */pylayer2static-$want-py3-none-manylinux_*_x86_64.whl) ok "make wheel built $(basename "$whl") in $(( $(date +%s) - t0 ))s" ;;
        *) ko "make wheel made '$whl', not one pylayer2static-$want-py3-none-manylinux_*.whl"; finish ;;
    esac
else
    ko "make wheel failed" "$tmp/build.log"
    finish
fi

# 2. install into a fresh venv, with the released framework (no repo path anywhere)
t0=$(date +%s)
venv=$tmp/venv
grep -v '^pytest' "$req" > "$tmp/req.txt"
if "$python" -m venv "$venv" >"$tmp/install.log" 2>&1 &&
   "$venv/bin/python" -m pip install -q --disable-pip-version-check "$whl" -r "$tmp/req.txt" >>"$tmp/install.log" 2>&1; then
    ok "pip install of the wheel and $(grep '^paddlepaddle' "$tmp/req.txt") into a fresh venv in $(( $(date +%s) - t0 ))s"
else
    ko "pip install into a fresh venv failed" "$tmp/install.log"
    finish
fi

work=$tmp/work
mkdir -p "$work"
cp "$root/samples/cus_tanh_full.py" "$root/samples/demo.py" "$work/"
# Only the venv: its bin on PATH, no PYTHONPATH, python -I, the temp dir as cwd.
run() { (cd "$work" && env -u PYTHONPATH -u PYTHONHOME PATH="$venv/bin:/usr/bin:/bin" "$@"); }

# 3. the command on PATH
if run sh -c 'command -v pylayer2static' >"$tmp/which" 2>&1 && [ "$(cat "$tmp/which")" = "$venv/bin/pylayer2static" ]; then
    ok "pylayer2static on PATH is the venv's ($venv/bin/pylayer2static)"
else
    ko "pylayer2static is not the venv's command" "$tmp/which"
fi
if run pylayer2static --version >"$tmp/v1" 2>&1 && head -n1 "$tmp/v1" | grep -qx "pylayer2static $want"; then
    ok "pylayer2static --version: $(head -n1 "$tmp/v1")"
else
    ko "pylayer2static --version does not say $want" "$tmp/v1"
fi
if run python -I -m pylayer2static --version >"$tmp/v2" 2>&1 && cmp -s "$tmp/v1" "$tmp/v2"; then
    ok "python -m pylayer2static --version says the same"
else
    ko "python -m pylayer2static --version differs" "$tmp/v2"
fi
run python -I -m pylayer2static --no-such-option >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then ok "python -m pylayer2static passes the binary's exit code (usage error: 2)"; else ko "python -m pylayer2static --no-such-option exited $rc, not 2"; fi

# 4. the runtime, from the venv, same version
if run python -I -c '
import os, sys, pylayer2static_runtime as r, pylayer2static as p
venv = sys.argv[1]
assert r.__file__.startswith(venv + "/lib/"), r.__file__
assert p.__file__.startswith(venv + "/lib/"), p.__file__
assert r.__version__ == p.__version__ == sys.argv[2], (r.__version__, p.__version__)
assert p.find_binary() == venv + "/bin/pylayer2static", p.find_binary()
print(r.__file__, r.__version__)
' "$venv" "$want" >"$tmp/rt" 2>&1; then
    ok "import pylayer2static_runtime from the venv, __version__ $want (wheel metadata and version.h agree)"
else
    ko "the runtime is not the venv's or its version differs" "$tmp/rt"
fi

# 4b. the runtime alone, as `pip install ./runtime` installs it (not editable): every layer of
# the package is there, and it imports beside the released framework.
rt_target=$tmp/runtime-alone
mkdir -p "$tmp/runtime-src"
if (cd "$root/runtime" && git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$tmp/runtime-src") &&
   "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --target "$rt_target" "$tmp/runtime-src" \
        >"$tmp/rt-alone" 2>&1 &&
   run env PYTHONPATH="$rt_target" python -c '
import os, sys, pylayer2static_runtime as r
assert r.__file__.startswith(sys.argv[1]), r.__file__
from pylayer2static_runtime.core import scope
from pylayer2static_runtime.pir import ops
from pylayer2static_runtime.legacy import inline
from pylayer2static_runtime.run import RANK_ENTRY
assert RANK_ENTRY.startswith(sys.argv[1]) and os.path.isfile(RANK_ENTRY), RANK_ENTRY
print(r.__file__)
' "$rt_target" >>"$tmp/rt-alone" 2>&1; then
    ok "pip install ./runtime installs the whole runtime (core/, pir/, legacy/, launch_worker/) and it imports"
else
    ko "pip install ./runtime gave an incomplete runtime" "$tmp/rt-alone"
fi

# 5. a self-contained binary
bin=$venv/bin/pylayer2static
needed=$(readelf -d "$bin" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $needed" in
    *tree-sitter*|*cjson*|"") ko "the binary needs: '$needed' (want only the C library)" ;;
    *)
        extra=$(printf '%s\n' $needed | grep -vE '^(libc\.so\.6|ld-linux-x86-64\.so\.2)$' || true)
        if [ -z "$extra" ]; then ok "the binary needs only the C library ($needed)"; else ko "the binary needs $extra besides libc"; fi ;;
esac

# 6. the request's example, transpiled by the installed command, run from the install only
if run pylayer2static cus_tanh_full.py -o cus_tanh_full_static.py >"$tmp/tr" 2>&1 &&
   grep -q 'import pylayer2static_runtime as _p2s' "$work/cus_tanh_full_static.py"; then
    ok "pylayer2static samples/cus_tanh_full.py -o ... (installed command)"
else
    ko "transpiling the sample with the installed command failed" "$tmp/tr"
fi
if cat "$work/cus_tanh_full.py" | run python -I -m pylayer2static - --stdin-filename cus_tanh_full.py >"$tmp/stdin.py" 2>"$tmp/stdin.err" &&
   cmp -s "$tmp/stdin.py" "$work/cus_tanh_full_static.py"; then
    ok "python -m pylayer2static on standard input gives the same output"
else
    ko "python -m pylayer2static - differs from the file output" "$tmp/stdin.err"
fi
t0=$(date +%s)
if run env GLOG_minloglevel=2 PYTHONWARNINGS=ignore::UserWarning python -I demo.py cus_tanh_full.py cus_tanh_full_static.py >"$tmp/demo" 2>&1 &&
   grep -q '^OK cus_tanh_full.py' "$tmp/demo"; then
    ok "the request's example end to end from the wheel ($(( $(date +%s) - t0 ))s): $(grep '^OK' "$tmp/demo")"
else
    ko "the request's example failed from the wheel install" "$tmp/demo"
fi
t0=$(date +%s)
if run env -u P2S_BIN GLOG_minloglevel=2 PYTHONWARNINGS=ignore::UserWarning python -I -m pylayer2static run cus_tanh_full.py >"$tmp/run" 2>&1 &&
   grep -q '^saved to' "$tmp/run" &&
   grep -q '_p2s.apply(cus_tanh, y, func1=paddle.tanh)' "$work/__pycache__/cus_tanh_full.pylayer2static-$want.py"; then
    ok "python -m pylayer2static run cus_tanh_full.py: transpiled on import (cached in __pycache__), trained and saved ($(( $(date +%s) - t0 ))s)"
else
    ko "python -m pylayer2static run cus_tanh_full.py failed from the wheel install" "$tmp/run"
fi
if grep -q "$root" "$tmp/demo" "$tmp/rt" "$tmp/run"; then
    ko "the run mentions the repository ($root): it was not from the install only"
else
    ok "nothing of the run came from the repository"
fi
finish
