#!/bin/sh
# run.sh BIN [SECTION...] — fault injection and hostile inputs (tests/reliability/reliability.py).
# Prints `reliability: N passed, N failed`.
here=$(cd "$(dirname "$0")" && pwd)
exec "${PYTHON:-python3}" "$here/reliability.py" "$@"
