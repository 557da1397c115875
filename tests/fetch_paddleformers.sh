#!/bin/sh
# fetch_paddleformers.sh DIR — paddleformers and the dependencies its Llama needs
# (tests/requirements-paddleformers.txt: versions and sha256 pinned, pip --require-hashes) in
# DIR/site, installed --no-deps --only-binary :all: --target with the 3.3.1 venv's pip, unless
# DIR/site already holds that very requirements file's install. Prints DIR/site; exits 1 with
# the reason when it cannot be had. The venv is never touched: the tests put DIR/site on
# PYTHONPATH, after the venv's own site-packages.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
req="$root/tests/requirements-paddleformers.txt"
mkdir -p "$1"
dir=$(cd "$1" && pwd)
stamp=$(sha256sum "$req" | cut -d' ' -f1)
if [ "$(cat "$dir/site/.p2s-ready" 2>/dev/null)" != "$stamp" ]; then
    staging=$(mktemp -d "$dir/site.XXXXXX")
    log=$(mktemp)
    if ! "$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
            --only-binary :all: --target "$staging" -r "$req" >"$log" 2>&1; then
        echo "fetch_paddleformers: pip install -r tests/requirements-paddleformers.txt failed:" >&2
        tail -5 "$log" >&2
        rm -rf "$staging" "$log"
        exit 1
    fi
    rm -f "$log"
    echo "$stamp" >"$staging/.p2s-ready"
    # Another process may have installed it meanwhile: either copy is the same pinned install.
    rm -rf "$dir/site.old"
    [ -d "$dir/site" ] && mv "$dir/site" "$dir/site.old"
    mv "$staging" "$dir/site" && rm -rf "$dir/site.old"
fi
echo "$dir/site"
