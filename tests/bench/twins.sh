#!/bin/sh
# twins.sh [-o OUT] [OPTIONS...] — transpiled PyLayer models against their built-in twins on
# both pinned frameworks (tests/bench/twins.py, which takes OPTIONS: --repeat N, --turn S,
# --models NAME...). Prints the tables, or with -o writes them to OUT.
exec sh "$(dirname "$0")/each_version.sh" twins.py "$@"
