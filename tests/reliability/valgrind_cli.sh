#!/bin/sh
# valgrind_cli.sh BIN — the CLI contract suite (tests/cli/run.sh) with every run of BIN under
# valgrind memcheck. A run with any memcheck error or a definitely, indirectly or possibly lost
# block fails. Prints `cli-valgrind: N passed, N failed`: the CLI suite's own checks, plus one
# failure per run that valgrind reported on.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs" "$work/bin"
wrapper="$work/bin/pylayer2static"
# A run made to fail an allocation ends by _exit(4) in the middle of the pipeline, on purpose:
# what it still holds is not a leak, so only memory errors count for it.
cat > "$wrapper" <<WRAP
#!/bin/sh
leaks=definite,indirect,possible
[ -n "\${P2S_FAIL_ALLOC:-}" ] && leaks=none
exec valgrind -q --tool=memcheck --error-exitcode=97 --leak-check=full \\
    --show-leak-kinds=\$leaks --errors-for-leak-kinds=\$leaks \\
    --track-fds=no --log-file="$work/logs/vg.%p.log" "$bin" "\$@"
WRAP
chmod +x "$wrapper"
if ! command -v valgrind >/dev/null 2>&1; then
    echo "cli-valgrind: valgrind is not installed (make deps installs it)"
    echo "cli-valgrind: 0 passed, 1 failed"
    exit 1
fi
# The wrapper execs the binary: `run` names the binary itself in P2S_BIN, not the wrapper.
P2S_CLI_REAL_BIN=$(readlink -f "$bin") sh "$root/tests/cli/run.sh" "$wrapper" > "$work/cli.log" 2>&1
grep -v "^cli: [0-9]* passed" "$work/cli.log"
line=$(grep -E "^cli: [0-9]+ passed, [0-9]+ failed" "$work/cli.log" | tail -n1)
p=$(printf '%s' "$line" | sed -n 's/^cli: \([0-9]*\) passed.*/\1/p')
f=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
runs=0 reported=0
for log in "$work"/logs/vg.*.log; do
    [ -f "$log" ] || continue
    runs=$((runs + 1))
    if [ -s "$log" ]; then
        reported=$((reported + 1))
        echo "cli-valgrind: FAIL memcheck reported on a run:"
        head -n 30 "$log"
    fi
done
echo "cli-valgrind: $runs runs under memcheck, $reported with reports"
[ "$runs" -gt 0 ] || reported=$((reported + 1))
echo "cli-valgrind: ${p:-0} passed, $(( ${f:-1} + reported )) failed"
[ $(( ${f:-1} + reported )) -eq 0 ]
