#!/bin/sh
# run.sh BIN [--wrap 'CMD'] — the language server's suites: the protocol tests over pipes
# (test_protocol.py, standard-library Python) and the real-client test (headless Neovim,
# run_nvim.sh). Each prints `lsp: N passed, N failed`; the last line sums them.
# With --wrap (e.g. valgrind) only the protocol tests run, each server under the wrapper.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
python3 "$here/test_protocol.py" "$bin" "$@" 2>&1 | tee "$log"
[ $# -eq 0 ] && sh "$here/run_nvim.sh" "$bin" 2>&1 | tee -a "$log"
p=0 f=0
for line in $(grep -E '^lsp: [0-9]+ passed, [0-9]+ failed' "$log" | sed 's/^lsp: \([0-9]*\) passed, \([0-9]*\) failed.*/\1:\2/'); do
    p=$((p + ${line%%:*}))
    f=$((f + ${line##*:}))
done
[ "$p" -eq 0 ] && [ "$f" -eq 0 ] && f=1
echo "lsp: $p passed, $f failed"
[ "$f" -eq 0 ]
