#!/bin/sh
# fetch_cjson.sh DEST — cJSON's C source for the statically linked binary of the wheel.
# Debian ships libcjson only as a shared library (libtree-sitter-dev has its .a), so the wheel
# builds cJSON.c from Debian's own source package: `apt-get source`, through a private apt state
# under DEST (the machine's apt configuration is not touched), from the same archive entries as
# /etc/apt/sources.list.d/debian.sources with `Types: deb-src`. apt checks the signed Sources
# index and the tarballs' hashes, dpkg-source the .dsc's checksums and applies Debian's patches
# (security fixes included). The version is the installed libcjson-dev's when the archive still
# has it, else the archive's newest. Leaves DEST/cJSON.c, DEST/cjson/cJSON.h, DEST/VERSION.
set -eu
dest=$1
case $dest in /*) ;; *) dest=$(pwd)/$dest ;; esac
command -v dpkg-source >/dev/null 2>&1 || {
    echo "cjson: installing dpkg-dev (dpkg-source)"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends dpkg-dev ||
        { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends dpkg-dev; }
}
work=$dest.work
rm -rf "$work"
mkdir -p "$work/parts" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
found=""
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    grep -q '^Types:.*\bdeb\b' "$f" || continue
    grep -qi 'debian-archive-keyring' "$f" || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" > "$work/parts/$(basename "$f")"
    found=1
done
[ -n "$found" ] || { echo "cjson: no Debian archive entry in /etc/apt/sources.list.d/*.sources" >&2; exit 1; }
apt() {
    apt-get -q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$work/parts" \
        -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache" \
        -o APT::Sandbox::User=root "$@"
}
apt update >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; echo "cjson: apt-get update of the source index failed" >&2; exit 1; }
want=$(dpkg-query -W -f='${Version}' libcjson-dev 2>/dev/null || true)
cd "$work/src"
if [ -z "$want" ] || ! apt source --download-only "cjson=$want" >>"$work/apt.log" 2>&1; then
    apt source --download-only cjson >>"$work/apt.log" 2>&1 || {
        cat "$work/apt.log" >&2
        echo "cjson: could not download Debian's cjson source package" >&2
        exit 1
    }
fi
dsc=$(ls ./cjson_*.dsc)
dpkg-source -x "$dsc" unpacked >>"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
version=$(sed -n 's/^Version: //p' "$dsc")
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp/cjson"
cp unpacked/cJSON.c "$dest.tmp/cJSON.c"
cp unpacked/cJSON.h "$dest.tmp/cjson/cJSON.h"
cp unpacked/LICENSE "$dest.tmp/LICENSE"
printf '%s\n' "$version" > "$dest.tmp/VERSION"
cd /
rm -rf "$dest" "$work"
mv "$dest.tmp" "$dest"
echo "cjson: Debian source package cjson $version"
