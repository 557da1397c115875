#!/bin/sh
# demo.sh BIN — the main job: transpile the request's example, train it eagerly and as a static
# graph, save, load, predict, and compare (samples/demo.py), on paddlepaddle 3.3.1.
set -eu
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" "$root/samples/cus_tanh_full.py" -o "$out/cus_tanh_full.py"
echo "transpiled samples/cus_tanh_full.py -> $out/cus_tanh_full.py; what changed:"
diff -u "$root/samples/cus_tanh_full.py" "$out/cus_tanh_full.py" | sed -n '3,200p' || true
echo
# Paddle's C++ log lines and its internal UserWarnings would bury the table.
GLOG_minloglevel=2 PYTHONWARNINGS=ignore::UserWarning "$root/.venv/bin/python" "$root/samples/demo.py" "$root/samples/cus_tanh_full.py" "$out/cus_tanh_full.py"
