#!/bin/sh
# deps.sh — installs the Debian packages the build needs, if any is missing.
set -eu
missing=""
[ -f /usr/include/tree_sitter/api.h ] || missing="$missing libtree-sitter-dev"
[ -f /usr/include/cjson/cJSON.h ] || missing="$missing libcjson-dev"
[ -f /usr/include/cmocka.h ] || missing="$missing libcmocka-dev"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
command -v nvim >/dev/null 2>&1 || missing="$missing neovim"  # the language server's real-client test
command -v dpkg-source >/dev/null 2>&1 || missing="$missing dpkg-dev"  # make wheel: cJSON source
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
