#!/bin/sh
# run.sh BIN [--venv DIR[=TREE]]... — the conformance suite: PaddlePaddle's own PyLayer tests
# (paddle-tests/ beside this script, vendored, copied to a temp dir) run untranspiled and transpiled by
# BIN under each pinned framework version (.venv: paddle-3/test, .venv-2.6: paddle-2.6/test);
# every test that passes untranspiled must pass transpiled, except the entries of
# expected_differences.txt. The work is done by conformance.py (standard library only, see its
# docstring); this prints its per-version lines and last `conformance: N passed, N failed`.
# Never skips: a missing venv, framework or test tree counts as failed. --venv runs other venvs
# instead of the pinned two (a framework-version matrix); see conformance.py --help.
set -u
if [ $# -lt 1 ]; then
    echo "usage: $0 BIN [--venv DIR[=TREE]]..." >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$1" ] || [ ! -x "$1" ]; then
    echo "conformance: FAIL no transpiler at $1 (make)"
    echo "conformance: 0 passed, 1 failed"
    exit 1
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
    echo "conformance: FAIL no $python to run the suite"
    echo "conformance: 0 passed, 1 failed"
    exit 1
fi
shift
exec "$python" "$here/conformance.py" "$bin" "$@"
