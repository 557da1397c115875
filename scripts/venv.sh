#!/bin/sh
# venv.sh DIR REQUIREMENTS — a project-local venv with the pinned framework from the Python
# package index and the runtime installed in editable mode. Fails loudly if anything cannot be
# installed: the end-to-end tests never run without the real framework.
set -eu
dir=$1 req=$2
python=${PYTHON:-python3}
if [ ! -x "$dir/bin/python" ]; then
    "$python" -m venv "$dir"
fi
"$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
"$dir/bin/python" -m pip install -q --disable-pip-version-check -e runtime
"$dir/bin/python" -c "import paddle, pylayer2static_runtime; print('venv $dir: paddle', paddle.__version__)"
touch "$dir/.p2s-ready"
