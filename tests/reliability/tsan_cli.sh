#!/bin/sh
# tsan_cli.sh BIN — the CLI contract suite (tests/cli/run.sh) with every run of BIN, a
# ThreadSanitizer build (mk/reliability.mk: tsan-build), checked for data races: tree mode's
# workers share the external set and wait for each other's modules (tree.c), and `-j2` runs of
# the suite cover both. Address-space randomisation is turned off for the runs (`setarch -R`):
# some kernels randomise more of it than gcc 12's ThreadSanitizer can map around. Prints
# `cli-tsan: N passed, N failed`: the CLI suite's own checks, plus one failure per run with a
# report.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs" "$work/bin"
wrapper="$work/bin/pylayer2static"
cat > "$wrapper" <<WRAP
#!/bin/sh
TSAN_OPTIONS="log_path=$work/logs/tsan exitcode=98" exec setarch "\$(uname -m)" -R "$bin" "\$@"
WRAP
chmod +x "$wrapper"
P2S_CLI_REAL_BIN=$(readlink -f "$bin") sh "$root/tests/cli/run.sh" "$wrapper" > "$work/cli.log" 2>&1
grep -v "^cli: [0-9]* passed" "$work/cli.log"
line=$(grep -E "^cli: [0-9]+ passed, [0-9]+ failed" "$work/cli.log" | tail -n1)
p=$(printf '%s' "$line" | sed -n 's/^cli: \([0-9]*\) passed.*/\1/p')
f=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
reported=0
for log in "$work"/logs/tsan.*; do
    [ -f "$log" ] || continue
    reported=$((reported + 1))
    echo "cli-tsan: FAIL ThreadSanitizer reported on a run:"
    head -n 40 "$log"
done
echo "cli-tsan: ${p:-0} passed, $(( ${f:-1} + reported )) failed"
[ $(( ${f:-1} + reported )) -eq 0 ]
