#!/bin/sh
# fetch_paddlenlp.sh DIR [VERSION] — a pinned paddlenlp wheel (public PyLayer code for the
# tests), into DIR from the package index unless already there, checked against its sha256.
# VERSION: 2.8.1 (default: the quick LoRA layers) or 3.0.0b4 (FusedHeadAndCrossEntropy, which
# 2.8.1 does not have). Prints the wheel's path; exits 1 with the reason when it cannot be had
# (never committed to the repo).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
NLP_VERSION=${2:-2.8.1}
case $NLP_VERSION in
    2.8.1) NLP_SHA256=8cb5324ee5c39d29264ec5049ea5a6beeebb04a625b5a5c519b92475ea7d067f ;;
    3.0.0b4) NLP_SHA256=294c81bd50ffcb609ac15c1f1769bfc807cea06d4dda5f614041bf19d42e9b3d ;;
    *) echo "fetch_paddlenlp: no pinned sha256 for paddlenlp $NLP_VERSION" >&2; exit 1 ;;
esac
wheel=$1/paddlenlp-$NLP_VERSION-py3-none-any.whl
mkdir -p "$1"
if [ ! -f "$wheel" ]; then
    log=$(mktemp)
    if ! "$root/.venv/bin/python" -m pip download --quiet --no-deps "paddlenlp==$NLP_VERSION" -d "$1" >"$log" 2>&1; then
        echo "fetch_paddlenlp: pip download paddlenlp==$NLP_VERSION failed:" >&2
        tail -3 "$log" >&2
        rm -f "$log"
        exit 1
    fi
    rm -f "$log"
fi
if ! echo "$NLP_SHA256  $wheel" | sha256sum -c --status; then
    echo "fetch_paddlenlp: $wheel: sha256 is not $NLP_SHA256" >&2
    rm -f "$wheel"
    exit 1
fi
echo "$wheel"
