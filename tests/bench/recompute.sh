#!/bin/sh
# recompute.sh [-o OUT] [OPTIONS...] — recompute's peak memory and step against the same model
# without recompute, under to_static, on both pinned frameworks (tests/bench/recompute.py, which
# takes OPTIONS: --repeat N). Prints the tables, or with -o writes them to OUT.
exec sh "$(dirname "$0")/each_version.sh" recompute.py "$@"
