#!/bin/sh
# docs_current.sh — the generated docs match a fresh run: docs/rules.md (from the rules and the
# golden cases) and docs/SUPPORT.md (from the e2e cases, once per framework version; its python-state
# and paddleformers rows from their committed data, which tests/e2e/test_python_state.py and
# test_run_paddleformers.py check).
# Prints `docs: N passed, N failed`.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
passed=0 failed=0
run() {  # run LABEL COMMAND...
    label=$1
    shift
    if (cd "$root" && "$@") > /tmp/p2s-docs.$$ 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "docs: FAIL $label"
        tail -n 20 /tmp/p2s-docs.$$
    fi
    rm -f /tmp/p2s-docs.$$
}
run "docs/rules.md is current" python3 tools/rules_doc.py --check
run "docs/SUPPORT.md is current (paddle 3.3.1)" .venv/bin/python tests/e2e/support_matrix.py --check
run "docs/SUPPORT.md is current (paddle 2.6.2)" .venv-2.6/bin/python tests/e2e/support_matrix.py --check
run "docs/SUPPORT.md python-state rows are current" python3 tests/e2e/python_state_table.py --check
run "docs/SUPPORT.md paddleformers rows are current" python3 tests/e2e/paddleformers_table.py --check
echo "docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
