#!/bin/sh
# fetch.sh PIN DEST — download the pinned grammar tarball from the npm registry, check its
# integrity against the pin, and unpack src/ into DEST. Fails (and leaves DEST absent) on any
# download error or hash mismatch.
set -eu
pin=$1 dest=$2
name=$(sed -n 's/^name=//p' "$pin")
version=$(sed -n 's/^version=//p' "$pin")
want=$(sed -n 's/^integrity=//p' "$pin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && npm pack --silent "$name@$version" >/dev/null 2>npm.log); then
    echo "grammar: could not download $name@$version from the npm registry:" >&2
    cat "$work/npm.log" >&2
    exit 1
fi
tarball=$(ls "$work"/*.tgz)
got=sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tarball")
if [ "$got" != "$want" ]; then
    echo "grammar: integrity check FAILED for $name@$version" >&2
    echo "  pinned:     $want" >&2
    echo "  downloaded: $got" >&2
    echo "  the tarball is not the one pinned in $pin; refusing to build with it" >&2
    exit 1
fi
mkdir -p "$work/unpack"
tar xzf "$tarball" -C "$work/unpack"
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
cp -R "$work/unpack/package/src/." "$dest.tmp/"
# The grammar's license travels with binaries that compile it in (the wheel's metadata).
[ ! -f "$work/unpack/package/LICENSE" ] || cp "$work/unpack/package/LICENSE" "$dest.tmp/LICENSE"
printf '%s\n' "$version" > "$dest.tmp/VERSION"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "grammar: $name@$version verified ($want)"
