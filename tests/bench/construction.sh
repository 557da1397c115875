#!/bin/sh
# construction.sh [-o OUT] [OPTIONS...] — how long transpiled models take to build their static
# graphs against their built-in twins, on both pinned frameworks (tests/bench/construction.py,
# which takes OPTIONS: --repeat N, --models NAME...). Prints the tables, or with -o writes them to OUT.
exec sh "$(dirname "$0")/each_version.sh" construction.py "$@"
