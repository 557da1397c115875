#!/bin/sh
# cli_wrapped.sh KIND BIN — the CLI contract suite (tests/cli/run.sh) with every run of BIN
# wrapped, as KIND says:
#   valgrind  under valgrind memcheck: a run with any memcheck error or a definitely,
#             indirectly or possibly lost block fails;
#   tsan      BIN is a ThreadSanitizer build (mk/reliability.mk: tsan-build): a run with a
#             report (a data race) fails. Tree mode's workers share the external set and wait
#             for each other's modules (tree.c); the suite's -j2 trees run both. Address-space
#             randomisation is off for the runs (`setarch -R`) where it can be turned off: some
#             kernels randomise more of it than gcc 12's ThreadSanitizer can map around.
# Prints `cli-KIND: N passed, N failed`: the CLI suite's own checks, plus one failure per run
# with a report.
set -u
kind=$1
bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs" "$work/bin"
wrapper="$work/bin/pylayer2static"
case $kind in
valgrind)
    if ! command -v valgrind >/dev/null 2>&1; then
        echo "cli-valgrind: valgrind is not installed (make deps installs it)"
        echo "cli-valgrind: 0 passed, 1 failed"
        exit 1
    fi
    # A run made to fail an allocation ends by _exit(4) in the middle of the pipeline, on
    # purpose: what it still holds is not a leak, so only memory errors count for it.
    cat > "$wrapper" <<WRAP
#!/bin/sh
echo run >> "$work/runs"
leaks=definite,indirect,possible
[ -n "\${P2S_FAIL_ALLOC:-}" ] && leaks=none
exec valgrind -q --tool=memcheck --error-exitcode=97 --leak-check=full \\
    --show-leak-kinds=\$leaks --errors-for-leak-kinds=\$leaks \\
    --track-fds=no --log-file="$work/logs/vg.%p.log" "$bin" "\$@"
WRAP
    ;;
tsan)
    # Where the personality cannot be set (a container's seccomp profile may refuse it), the
    # runs go without: a kernel that randomises too much then fails them, loudly.
    norandom=
    setarch "$(uname -m)" -R true 2>/dev/null && norandom="setarch $(uname -m) -R"
    cat > "$wrapper" <<WRAP
#!/bin/sh
echo run >> "$work/runs"
TSAN_OPTIONS="log_path=$work/logs/tsan exitcode=98" exec $norandom "$bin" "\$@"
WRAP
    ;;
*)
    echo "cli_wrapped.sh: KIND is valgrind or tsan, not '$kind'" >&2
    exit 2
    ;;
esac
chmod +x "$wrapper"
# The wrapper execs the binary: `run` names the binary itself in P2S_BIN, not the wrapper.
P2S_CLI_REAL_BIN=$(readlink -f "$bin") sh "$root/tests/cli/run.sh" "$wrapper" > "$work/cli.log" 2>&1
grep -v "^cli: [0-9]* passed" "$work/cli.log"
line=$(grep -E "^cli: [0-9]+ passed, [0-9]+ failed" "$work/cli.log" | tail -n1)
p=$(printf '%s' "$line" | sed -n 's/^cli: \([0-9]*\) passed.*/\1/p')
f=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
runs=$(cat "$work/runs" 2>/dev/null | wc -l)
reported=0
for log in "$work"/logs/*; do
    if [ -s "$log" ]; then
        reported=$((reported + 1))
        echo "cli-$kind: FAIL $kind reported on a run:"
        head -n 40 "$log"
    fi
done
echo "cli-$kind: $runs runs under $kind, $reported with reports"
[ "$runs" -gt 0 ] || reported=$((reported + 1))
echo "cli-$kind: ${p:-0} passed, $(( ${f:-1} + reported )) failed"
[ $(( ${f:-1} + reported )) -eq 0 ]
