#!/bin/sh
# run_nvim.sh BIN — the real-client test: headless Neovim's built-in LSP client against
# `BIN lsp` (tests/lsp/nvim_test.lua). Prints `lsp: N passed, N failed`.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v nvim >/dev/null 2>&1; then
    echo "lsp: FAIL nvim is not installed (make deps installs Debian's neovim)"
    echo "lsp: 0 passed, 1 failed"
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$here/fixtures/model.py" "$tmp/model.py"
cp -R "$here/fixtures/siblings" "$tmp/siblings"
P2S_BIN=$bin P2S_FILE=$tmp/model.py P2S_PROJECT=$tmp/siblings P2S_RESULT=$tmp/result HOME=$tmp XDG_STATE_HOME=$tmp XDG_DATA_HOME=$tmp \
    timeout 60 nvim --headless -u NONE -i NONE -n -c "luafile $here/nvim_test.lua" >"$tmp/nvim.log" 2>&1
status=$?
if [ -f "$tmp/result" ] && grep -q '^lsp: [0-9]* passed' "$tmp/result"; then
    cat "$tmp/result"
else
    [ -f "$tmp/result" ] && cat "$tmp/result"
    echo "lsp: FAIL nvim exited with $status without a result"
    tail -n 20 "$tmp/nvim.log"
    echo "lsp: 0 passed, 1 failed"
    exit 1
fi
grep -q '^lsp: [0-9]* passed, 0 failed' "$tmp/result"
