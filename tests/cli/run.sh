#!/bin/sh
# run.sh BIN — the CLI contract, one check per behaviour: options, exit codes, atomic output,
# stdin/stdout, byte-identical pass-through of large real files, injected I/O and allocation
# failures. Prints `cli: N passed, N failed`.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${PYTHON:-python3}
passed=0 failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sample="$root/tests/golden/request_full/input.py"

check() {  # check NAME CONDITION-EXIT-STATUS
    if [ "$2" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "cli: FAIL $1"
    fi
}

expect_rc() {  # expect_rc NAME WANT COMMAND...
    name=$1 want=$2
    shift 2
    "$@" >"$work/stdout" 2>"$work/stderr"
    rc=$?
    [ "$rc" -eq "$want" ]
    check "$name (exit $rc, want $want; stderr: $(head -c 200 "$work/stderr"))" $?
}

only_file() {  # the directory holds exactly one entry: no temp file left behind
    [ "$(ls -A "$1" | wc -l)" -eq "$2" ]
}

# --- options and usage
expect_rc "--help exits 0" 0 "$bin" --help
grep -q -- "--in-place" "$work/stdout" && grep -q "130" "$work/stdout"
check "--help lists options and exit codes" $?
expect_rc "--version exits 0" 0 "$bin" --version
grep -q "^pylayer2static 0.1.0$" "$work/stdout" && grep -q "tree-sitter-python 0.23.6" "$work/stdout" &&
    grep -q "^rules: paddle.json version 1$" "$work/stdout"
check "--version names tool, grammar and rules versions" $?
expect_rc "unknown option is a usage error" 2 "$bin" --frobnicate x.py
grep -q "unrecognized option '--frobnicate'" "$work/stderr" && grep -q -- "--help" "$work/stderr"
check "usage error says what and where to look" $?
expect_rc "no input is a usage error" 2 "$bin"
expect_rc "-o equal to the input is a usage error" 2 "$bin" "$sample" -o "$sample"
cp "$sample" "$work/same.py"
(cd "$work" && "$bin" same.py -o ./same.py >/dev/null 2>&1)
[ $? -eq 2 ]
check "-o naming the input by another path is a usage error" $?

# --- outputs
expect_rc "stdout by default" 0 "$bin" "$sample"
grep -q "_p2s.apply(cus_tanh, y, func1=paddle.tanh)" "$work/stdout"
check "stdout holds the transpiled code" $?
cp "$work/stdout" "$work/expected.py"
expect_rc "-o - is stdout" 0 "$bin" "$sample" -o -
cmp -s "$work/stdout" "$work/expected.py"
check "-o - equals the default" $?
mkdir -p "$work/outdir"
expect_rc "-o writes a file" 0 "$bin" "$sample" -o "$work/outdir/out.py"
cmp -s "$work/outdir/out.py" "$work/expected.py" && only_file "$work/outdir" 1
check "-o file equals stdout, no temp file left" $?
expect_rc "stdin to stdout" 0 sh -c "'$bin' - --stdin-filename model.py < '$sample'"
cmp -s "$work/stdout" "$work/expected.py"
check "stdin gives the same output" $?
cp "$sample" "$work/inplace.py"
expect_rc "--in-place rewrites the input" 0 "$bin" --in-place "$work/inplace.py"
cmp -s "$work/inplace.py" "$work/expected.py"
check "--in-place result equals stdout" $?
touch -d "2001-01-01" "$work/inplace.py"
"$bin" --in-place "$work/inplace.py" 2>/dev/null
[ "$(stat -c %Y "$work/inplace.py")" = "$(date -d 2001-01-01 +%s)" ]
check "--in-place on transpiled output changes nothing, not even mtime" $?

# --- input errors: exit 1, a file:line:col message, nothing written
printf 'def f(:\n    pass\n' > "$work/bad.py"
mkdir -p "$work/errdir"
expect_rc "syntax error exits 1" 1 "$bin" "$work/bad.py" -o "$work/errdir/out.py"
grep -q "^$work/bad.py:1:[0-9]*: error\[P2S001\]" "$work/stderr" && only_file "$work/errdir" 0
check "syntax error: file:line:col message and no output file" $?
printf 'old\n' > "$work/errdir/keep.py"
"$bin" "$work/bad.py" -o "$work/errdir/keep.py" 2>/dev/null
[ "$(cat "$work/errdir/keep.py")" = old ] && only_file "$work/errdir" 1
check "syntax error leaves an existing output untouched" $?
printf 'x = 1\0\n' > "$work/nul.py"
expect_rc "NUL byte exits 1" 1 "$bin" "$work/nul.py"
grep -q "P2S002" "$work/stderr"
check "NUL byte has its own code" $?
printf 'x = "\377"\n' > "$work/latin.py"
expect_rc "invalid UTF-8 exits 1" 1 "$bin" "$work/latin.py"
grep -q "P2S003" "$work/stderr"
check "invalid UTF-8 has its own code" $?
printf '# coding: latin-1\nx = 1\n' > "$work/cookie.py"
expect_rc "non-UTF-8 cookie exits 1" 1 "$bin" "$work/cookie.py"
expect_rc "syntax error on stdin names --stdin-filename" 1 sh -c "'$bin' - --stdin-filename pkg/m.py < '$work/bad.py'"
grep -q "^pkg/m.py:1:" "$work/stderr"
check "stdin diagnostics use --stdin-filename" $?
expect_rc "json diagnostics" 1 "$bin" --output-format=json "$work/bad.py"
"$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[0]["code"]=="P2S001" and d[0]["line"]==1' "$work/stderr"
check "json diagnostics parse and carry code and line" $?

# --- I/O errors: exit 3, nothing written
expect_rc "missing input exits 3" 3 "$bin" "$work/nope.py"
expect_rc "directory without -o is a usage error" 2 "$bin" "$work"
expect_rc "endless input is bounded, exits 3" 3 "$bin" /dev/zero
expect_rc "missing output directory exits 3" 3 "$bin" "$sample" -o "$work/no/such/dir/out.py"
expect_rc "full device on stdout exits 3" 3 sh -c "'$bin' '$sample' > /dev/full"
mkdir -p "$work/faults"
for fault in write:ENOSPC write:EIO fsync:EIO rename:EXDEV open:EACCES; do
    printf 'old\n' > "$work/faults/out.py"
    expect_rc "injected $fault exits 3" 3 env P2S_FAULT=$fault "$bin" "$sample" -o "$work/faults/out.py"
    [ "$(cat "$work/faults/out.py")" = old ] && only_file "$work/faults" 1
    check "injected $fault leaves the destination untouched and no temp file" $?
done

# --- out of memory: one line, exit 4, no output, no temp file
mkdir -p "$work/oom"
expect_rc "failed allocation exits 4" 4 env P2S_FAIL_ALLOC=200 "$bin" "$sample" -o "$work/oom/out.py"
[ "$(cat "$work/stderr")" = "pylayer2static: error: out of memory" ] && only_file "$work/oom" 0
check "out of memory: one line, nothing written" $?

# --- large real files without PyLayer come back byte-identical (files and stdin/stdout)
stdlib=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
count=0 same=0
for f in "$stdlib"/typing.py "$stdlib"/argparse.py "$stdlib"/inspect.py "$stdlib"/tarfile.py \
         "$stdlib"/pydoc.py "$stdlib"/turtle.py "$stdlib"/_pydecimal.py "$stdlib"/email/_header_value_parser.py; do
    [ -f "$f" ] || continue
    count=$((count + 1))
    "$bin" "$f" -o "$work/copy.py" 2>/dev/null && cmp -s "$f" "$work/copy.py" &&
        "$bin" - < "$f" 2>/dev/null | cmp -s "$f" - && same=$((same + 1))
done
[ "$count" -ge 6 ] && [ "$same" -eq "$count" ]
check "large stdlib files come back byte-identical ($same of $count)" $?

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
