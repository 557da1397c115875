#!/bin/sh
# wheel.sh — `make wheel`: builds the platform wheel of pylayer2static into dist/.
# pip (the frontend) runs scikit-build-core (pyproject.toml, packaging/CMakeLists.txt), which
# compiles the statically linked binary and packs it with the runtime package; auditwheel then
# checks that the binary needs nothing beyond the C library's manylinux symbols and gives the
# wheel that manylinux tag (the binary inside is not changed: nothing is grafted). Expects the
# grammar (build/grammar) and cJSON's source (build/wheel-deps/cjson) fetched, and
# build/wheel-tools (packaging/requirements-tools.txt); the Makefile sees to all three.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/build/wheel-tools/bin
raw=$root/build/wheel/raw
cd "$root"
t0=$(date +%s)
rm -rf "$raw"
mkdir -p "$raw" dist
"$tools/python" -m pip wheel -q --no-deps --disable-pip-version-check -w "$raw" .
whl=$(ls "$raw"/pylayer2static-*.whl)
# The policy: the newest glibc symbol version the binary uses (auditwheel show says which).
plat=$(PATH="$tools:$PATH" "$tools/auditwheel" show "$whl" 2>/dev/null |
       tr -d '\n' | sed -n 's/.*consistent with the *following platform tag: *"\([^"]*\)".*/\1/p')
[ -n "$plat" ] || { PATH="$tools:$PATH" "$tools/auditwheel" show "$whl"; echo "wheel: auditwheel found no manylinux policy" >&2; exit 1; }
rm -f dist/pylayer2static-*.whl
PATH="$tools:$PATH" "$tools/auditwheel" repair --plat "$plat" --only-plat -w dist "$whl" >"$raw/auditwheel.log" 2>&1 || { cat "$raw/auditwheel.log" >&2; exit 1; }
out=$(ls dist/pylayer2static-*.whl)
echo "wheel: $out ($(wc -c < "$out") bytes, $plat, built in $(( $(date +%s) - t0 ))s)"
