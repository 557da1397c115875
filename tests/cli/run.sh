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
grep -q "^  lsp \[--stdio\]" "$work/stdout" && grep -q "^  run ARGS" "$work/stdout" && grep -q "^  127 " "$work/stdout"
check "--help lists the lsp and run commands and run's exit code" $?

# --- run: the Python runner takes over the process, told which binary started it
expect_rc "run execs the interpreter" 0 env P2S_PYTHON=/bin/echo "$bin" run -m pkg.train --epochs 2
[ "$(cat "$work/stdout")" = "-m pylayer2static_runtime.run -m pkg.train --epochs 2" ]
check "run passes its arguments after -m pylayer2static_runtime.run, verbatim" $?
printf '#!/bin/sh\nprintf "%%s\\n" "$P2S_BIN"\n' > "$work/show_bin"
chmod +x "$work/show_bin"
(cd "$work" && P2S_PYTHON=./show_bin "$bin" run x.py) >"$work/stdout" 2>&1
[ "$(cat "$work/stdout")" = "${P2S_CLI_REAL_BIN:-$(readlink -f "$bin")}" ]  # a wrapper sets the real one
check "run sets P2S_BIN to this binary's absolute path (got $(head -c 200 "$work/stdout"))" $?
expect_rc "run without an interpreter exits 127" 127 env P2S_PYTHON="$work/no-such-python" "$bin" run x.py
grep -q "cannot run '$work/no-such-python'" "$work/stderr"
check "run says which interpreter it cannot run" $?
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

# --- contract errors: exit 1, and the output is still made with the classes at fault as written
contract="$root/tests/golden/check_p2s301_left_as_written/input.py"
mkdir -p "$work/contract"
expect_rc "contract errors exit 1" 1 "$bin" "$contract" -o "$work/contract/out.py"
cmp -s "$work/contract/out.py" "$root/tests/golden/check_p2s301_left_as_written/expected.py" &&
    grep -q "error\[P2S105\]" "$work/stderr" && only_file "$work/contract" 1
check "contract errors: the output is written, the bad classes left as written" $?
grep -q "^a = Broken.apply(x)$" "$work/contract/out.py" && grep -q "^c = _p2s.apply(Scale, x)$" "$work/contract/out.py" &&
    ! grep -q "register(Broken)" "$work/contract/out.py"
check "contract errors: a bad class keeps its sites and gets no builder; the others are transpiled" $?
expect_rc "contract errors on stdout exit 1" 1 sh -c "'$bin' - < '$contract'"
cmp -s "$work/stdout" "$work/contract/out.py"
check "contract errors: stdout gets the same output" $?
expect_rc "--check on a current output with contract errors exits 1" 1 "$bin" "$contract" -o "$work/contract/out.py" --check
expect_rc "--warn demotes them: --check passes" 0 "$bin" "$contract" -o "$work/contract/out.py" --check --warn P2S105,P2S110
grep -q "warning\[P2S105\]" "$work/stderr" && grep -q "note\[P2S301\]" "$work/stderr"
check "--warn reports the errors as warnings and still notes the class left as written" $?
rm "$work/contract/out.py"
expect_rc "--check finds a missing output with contract errors" 1 "$bin" "$contract" -o "$work/contract/out.py" --check --warn P2S1
expect_rc "--diff with contract errors exits 1" 1 "$bin" "$contract" --diff
grep -q "^+c = _p2s.apply(Scale, x)$" "$work/stdout" && ! grep -q "^+a = " "$work/stdout"
check "--diff shows the transpiled part only" $?
cp "$contract" "$work/contract/inplace.py"
expect_rc "--in-place with contract errors exits 1" 1 "$bin" --in-place "$work/contract/inplace.py"
cmp -s "$work/contract/inplace.py" "$root/tests/golden/check_p2s301_left_as_written/expected.py"
check "--in-place with contract errors rewrites the file" $?
expect_rc "--in-place again still exits 1" 1 "$bin" --in-place "$work/contract/inplace.py"
cmp -s "$work/contract/inplace.py" "$root/tests/golden/check_p2s301_left_as_written/expected.py"
check "a second run over the output changes nothing" $?
expect_rc "--list with contract errors exits 1" 1 "$bin" --list "$contract"
grep -q "input.py:5:7 class Broken (left as written)$" "$work/stdout" &&
    grep -q "input.py:15:7 class Derived (left as written)$" "$work/stdout" &&
    grep -q "input.py:21:7 class Scale$" "$work/stdout" &&
    grep -q "input.py:32:5 apply Broken (left as written)$" "$work/stdout" &&
    grep -q "input.py:34:5 apply Scale$" "$work/stdout" &&
    grep -q "input.py:35:5 apply Scale (left as written)$" "$work/stdout"
check "--list lists classes and sites of a file with errors, marking those left as written" $?
mkdir -p "$work/warncfg"
printf '[tool.pylayer2static]
warn = ["P2S105", "P2S110"]
' > "$work/warncfg/pyproject.toml"
cp "$contract" "$work/warncfg/m.py"
expect_rc "[tool.pylayer2static] warn demotes contract errors" 0 "$bin" "$work/warncfg/m.py" -o "$work/warncfg/out.py"
cmp -s "$work/warncfg/out.py" "$root/tests/golden/check_p2s301_left_as_written/expected.py"
check "warn changes the exit status, never the output" $?
expect_rc "--warn an unknown code is a usage error" 2 "$bin" --warn P2S9X "$contract"
grep -q "^pylayer2static: error: --warn: unknown rule selector 'P2S9X'" "$work/stderr"
check "an unknown --warn selector is named" $?
for copy in paddle-3 paddle-2.6; do
    op_test="$root/tests/conformance/paddle-tests/$copy/test/legacy_test/test_pylayer_op.py"
    [ -f "$op_test" ] || { check "vendored $copy test_pylayer_op.py exists" 1; continue; }
    expect_rc "PaddlePaddle's $copy test_pylayer_op.py exits 1" 1 "$bin" "$op_test" -o "$work/contract/op_test.py"
    "$python" -c 'import ast,sys; ast.parse(open(sys.argv[1]).read())' "$work/contract/op_test.py" &&
        grep -q "Layer_bk_match.apply(input1)" "$work/contract/op_test.py" &&
        grep -q "_p2s.apply(Layer_no_bk, input1)" "$work/contract/op_test.py"
    check "PaddlePaddle's $copy test_pylayer_op.py: written, parses, its wrong classes left as written" $?
    expect_rc "its warn list passes" 0 "$bin" --warn P2S101,P2S106 "$op_test" -o "$work/contract/op_test2.py"
    cmp -s "$work/contract/op_test.py" "$work/contract/op_test2.py"
    check "PaddlePaddle's $copy test_pylayer_op.py: the same output with --warn" $?
done

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

# --- --check, --diff, --lint, --list, --parse-only, formats
expect_rc "--check on a stale input exits 1" 1 "$bin" --check "$sample"
grep -q "would rewrite" "$work/stderr"
check "--check says what it would rewrite" $?
expect_rc "--check against an up-to-date -o exits 0" 0 "$bin" --check "$sample" -o "$work/outdir/out.py"
expect_rc "--check against a missing -o exits 1" 1 "$bin" --check "$sample" -o "$work/outdir/missing.py"
[ ! -e "$work/outdir/missing.py" ]
check "--check writes nothing" $?
expect_rc "--diff exits 0" 0 "$bin" --diff "$sample"
grep -q "^-        out = cus_tanh.apply(y, func1=paddle.tanh)$" "$work/stdout" &&
    grep -q "^+        out = _p2s.apply(cus_tanh, y, func1=paddle.tanh)$" "$work/stdout" && grep -q "^@@ " "$work/stdout"
check "--diff prints a unified diff of the rewrite" $?
printf '#!/bin/sh\n' > "$work/patch_base.py"
cp "$sample" "$work/patched.py"
"$bin" --diff "$work/patched.py" > "$work/p.diff" 2>/dev/null
(cd "$work" && patch -s -o patched_out.py patched.py < p.diff) && "$bin" "$work/patched.py" | cmp -s - "$work/patched_out.py"
check "--diff applies with patch(1) and gives the output" $?
expect_rc "--list exits 0" 0 "$bin" --list "$sample"
[ "$(cat "$work/stdout")" = "$sample:6:7 class cus_tanh
$sample:29:15 apply cus_tanh" ]
check "--list prints classes and apply sites with positions" $?
expect_rc "--lint of bad code exits 1" 1 "$bin" --lint "$work/bad.py"
grep -q "P2S001" "$work/stdout" && [ ! -s "$work/stderr" ]
check "--lint prints diagnostics on stdout" $?
expect_rc "--parse-only passes input through" 0 "$bin" --parse-only "$sample"
cmp -s "$work/stdout" "$sample"
check "--parse-only output is the input" $?
expect_rc "sarif output" 1 "$bin" --lint --output-format=sarif "$work/bad.py"
"$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["runs"][0]; assert d["version"]=="2.1.0" and r["results"][0]["ruleId"]=="P2S001" and r["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"]==1' "$work/stdout"
check "sarif is 2.1.0 with rule, level and region" $?
expect_rc "--color=always colours" 1 "$bin" --color=always "$work/bad.py"
grep -q "$(printf '\033')\[" "$work/stderr"
check "--color=always emits escapes" $?
expect_rc "--quiet hides notes" 0 "$bin" --quiet "$root/tests/golden/no_import_to_join/input.py"
[ ! -s "$work/stderr" ]
check "--quiet prints no note" $?

# --- several inputs
expect_rc "--lint over several files reports each, exits with the worst" 1 "$bin" --lint "$sample" "$work/bad.py" "$work/nul.py"
grep -q "bad.py:1:" "$work/stdout" && grep -q "nul.py:1:" "$work/stdout"
check "--lint over several files names each file" $?
expect_rc "--list over several files" 0 "$bin" --list "$sample" "$root/tests/golden/request_anchor/input.py"
[ "$(grep -c ' class cus_tanh$' "$work/stdout")" -eq 2 ]
check "--list over several files lists both" $?
expect_rc "several inputs without a mode are a usage error" 2 "$bin" "$sample" "$sample"
cp "$sample" "$work/multi1.py"
cp "$root/tests/golden/request_anchor/input.py" "$work/multi2.py"
expect_rc "--in-place over several files" 0 "$bin" --in-place "$work/multi1.py" "$work/multi2.py"
grep -q "_p2s.apply" "$work/multi1.py" && grep -q "_p2s.apply" "$work/multi2.py"
check "--in-place rewrites every input" $?
expect_rc "--check over transpiled files is clean" 0 "$bin" --check "$work/multi1.py" "$work/multi2.py"

# --- tree mode
tree="$work/tree"
mkdir -p "$tree/src/pkg/sub" "$tree/src/data" "$tree/src/build" "$tree/src/dir with space"
printf 'from .ops import Double\n' > "$tree/src/pkg/__init__.py"
printf 'import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass Double(PyLayer):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n\n    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n' > "$tree/src/pkg/ops.py"
printf 'import paddle\nimport pkg.ops as ops\nfrom .. import Double\n\n\ndef f(x):\n    return ops.Double.apply(x) + Double.apply(x)\n' > "$tree/src/pkg/sub/use.py"
printf 'hello\n' > "$tree/src/data/readme.txt"
printf 'build/\n*.log\n!keep.log\n' > "$tree/src/.gitignore"
printf 'x = 1\n' > "$tree/src/build/gen.py"
printf 'l\n' > "$tree/src/a.log"
printf 'k\n' > "$tree/src/keep.log"
printf 'y = 2\n' > "$tree/src/dir with space/$(printf 'm\303\251.py')"
printf 'z = 3\n' > "$tree/src/skip_me.py"
ln -s .. "$tree/src/pkg/loop"
expect_rc "tree mode exits 0" 0 "$bin" "$tree/src" -o "$tree/out" -j2 --exclude 'skip_*.py' --depfile "$tree/deps.mk"
(cd "$tree/out" && find . -type f | sort | tr '\n' ' ') > "$work/files"
[ "$(cat "$work/files")" = "./.gitignore ./data/readme.txt ./dir with space/mé.py ./keep.log ./pkg/__init__.py ./pkg/ops.py ./pkg/sub/use.py " ]
check "tree mode respects .gitignore (with negation), --exclude, skips symlinked dirs ($(cat "$work/files"))" $?
grep -q "_p2s.apply(ops.Double, x) + _p2s.apply(Double, x)" "$tree/out/pkg/sub/use.py"
check "tree mode resolves PyLayers across modules and re-exports" $?
grep -q "^$tree/out/pkg/sub/use.py: $tree/src/pkg/sub/use.py $tree/src/pkg/ops.py $tree/src/pkg/__init__.py$" "$tree/deps.mk" &&
    grep -q 'dir\\ with\\ space' "$tree/deps.mk"
check "depfile lists each output's sources, escaped" $?
"$bin" "$tree/src" -o "$tree/out1" -j1 --exclude 'skip_*.py' 2>/dev/null && diff -r "$tree/out" "$tree/out1" >/dev/null
check "-j1 and -j2 give identical trees" $?
touch -d 2001-01-01 "$tree/out/pkg/ops.py" "$tree/out/data/readme.txt"
"$bin" "$tree/src" -o "$tree/out" --exclude 'skip_*.py' 2>/dev/null
[ "$(stat -c %Y "$tree/out/pkg/ops.py")" = "$(date -d 2001-01-01 +%s)" ] &&
    [ "$(stat -c %Y "$tree/out/data/readme.txt")" = "$(date -d 2001-01-01 +%s)" ]
check "unchanged outputs keep their mtime" $?
expect_rc "tree --check up to date" 0 "$bin" "$tree/src" -o "$tree/out" --exclude 'skip_*.py' --check
printf 'changed\n' > "$tree/out/data/readme.txt"
expect_rc "tree --check finds a stale copy" 1 "$bin" "$tree/src" -o "$tree/out" --exclude 'skip_*.py' --check
expect_rc "tree without -o is a usage error" 2 "$bin" "$tree/src"
expect_rc "tree -o the input is a usage error" 2 "$bin" "$tree/src" -o "$tree/src"
expect_rc "--exclude on a file is a usage error" 2 "$bin" "$sample" --exclude x
printf 'def broken(:\n' > "$tree/src/pkg/bad.py"
expect_rc "tree with a syntax error exits 1" 1 "$bin" "$tree/src" -o "$tree/out2"
grep -q "pkg/bad.py:1:" "$work/stderr" && [ ! -e "$tree/out2/pkg/bad.py" ] && [ -f "$tree/out2/pkg/ops.py" ]
check "tree with a bad file reports it, writes the others, not it" $?
rm "$tree/src/pkg/bad.py"
cp "$contract" "$tree/src/pkg/broken.py"
printf 'from pkg.broken import Broken, Scale


class Again(Broken):
    pass


def g(x):
    return Broken.apply(x) + Scale.apply(x) + Again.apply(x)
' > "$tree/src/pkg/use_broken.py"
printf 'from pkg.use_broken import Again


def h(x):
    return Again.apply(x)
' > "$tree/src/pkg/use_again.py"
expect_rc "tree with contract errors exits 1" 1 "$bin" "$tree/src" -o "$tree/out3" --exclude 'skip_*.py'
cmp -s "$tree/out3/pkg/broken.py" "$root/tests/golden/check_p2s301_left_as_written/expected.py" &&
    cmp -s "$tree/out3/pkg/ops.py" "$tree/out/pkg/ops.py"
check "tree with contract errors writes every module, that one with its bad classes as written" $?
grep -q "return Broken.apply(x) + _p2s.apply(Scale, x) + Again.apply(x)$" "$tree/out3/pkg/use_broken.py" &&
    grep -q "return Again.apply(x)$" "$tree/out3/pkg/use_again.py" &&
    grep -q "use_broken.py:4:7: note\[P2S301\]: 'Again' is left as written" "$work/stderr"
check "tree: other modules' calls and subclasses of a class left as written stay as written" $?
"$bin" "$tree/src" -o "$tree/out4" -j1 --exclude 'skip_*.py' 2>/dev/null; diff -r "$tree/out3" "$tree/out4" >/dev/null
check "tree with contract errors: -j1 gives the same tree" $?
expect_rc "tree --check with contract errors exits 1" 1 "$bin" "$tree/src" -o "$tree/out3" --exclude 'skip_*.py' --check
expect_rc "tree --check with them demoted passes" 0 "$bin" "$tree/src" -o "$tree/out3" --exclude 'skip_*.py' --check --warn P2S1
rm "$tree/src/pkg/broken.py" "$tree/src/pkg/use_broken.py" "$tree/src/pkg/use_again.py"
expect_rc "tree --list" 0 "$bin" "$tree/src" --list
[ "$(grep -c ' apply ' "$work/stdout")" -eq 2 ] && grep -q "ops.py:5:7 class Double" "$work/stdout"
check "tree --list prints every site" $?

# --- the project model: a src/ layout package; file lists and single files read the sibling
# modules their imports reach, and write only the files they name
proj="$work/proj"
mkdir -p "$proj/src/pkg"
printf '[project]\nname = "pkg"\n' > "$proj/pyproject.toml"
: > "$proj/src/pkg/__init__.py"
printf 'import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass Q(PyLayer):\n    @staticmethod\n    def forward(ctx, x, scale=2.0):\n        return x * scale\n\n    @staticmethod\n    def backward(ctx, dy):\n        return dy * 2.0\n' > "$proj/src/pkg/layers.py"
printf 'import paddle\nfrom pkg.layers import Q\nfrom .layers import Q as Q2\n\n\ndef run(x):\n    return Q.apply(x) + Q2.apply(x, 3.0)\n' > "$proj/src/pkg/model.py"
cp "$proj/src/pkg/model.py" "$proj/src/pkg/train.py"
cp "$proj/src/pkg/model.py" "$work/model_as_written.py"
cp -r "$proj" "$work/proj_orig"
expect_rc "a single file of a src/ layout is listed with its sibling's PyLayer" 0 sh -c "cd '$proj' && '$bin' --list src/pkg/model.py"
[ "$(cat "$work/stdout")" = "src/pkg/model.py:7:12 apply Q
src/pkg/model.py:7:25 apply Q2" ]
check "absolute and relative imports of a sibling module resolve (got $(head -c 200 "$work/stdout"))" $?
expect_rc "--check on a named file that uses a sibling's PyLayer is stale" 1 sh -c "cd '$proj' && '$bin' --check src/pkg/model.py"
expect_rc "--in-place on one file" 0 sh -c "cd '$proj' && '$bin' --in-place src/pkg/model.py"
grep -q "_p2s.apply(Q, x) + _p2s.apply(Q2, x, 3.0)" "$proj/src/pkg/model.py" &&
    cmp -s "$proj/src/pkg/layers.py" "$work/proj_orig/src/pkg/layers.py" &&
    cmp -s "$proj/src/pkg/train.py" "$work/proj_orig/src/pkg/train.py"
check "--in-place rewrites the named file only: the sibling is read, not written" $?
expect_rc "--in-place on a file list" 0 sh -c "cd '$proj' && '$bin' --in-place src/pkg/*.py"
grep -q "def _p2s_static_Q(x, scale=_p2s.DEFAULT):" "$proj/src/pkg/layers.py" &&
    grep -q "_p2s.apply(Q, x)" "$proj/src/pkg/train.py" && cmp -s "$proj/src/pkg/train.py" "$proj/src/pkg/model.py"
check "a file list is transpiled as its tree would be" $?
expect_rc "--check passes after" 0 sh -c "cd '$proj' && '$bin' --check src/pkg/*.py"
# re-runs regenerate from the classes as they are now
touch -d "2001-01-01" "$proj/src/pkg/"*.py
expect_rc "a re-run over the output" 0 sh -c "cd '$proj' && '$bin' --in-place src/pkg/*.py"
[ -z "$(find "$proj/src/pkg" -name '*.py' -newermt 2001-01-02)" ] && ! grep -q P2S300 "$work/stderr"
check "a re-run over unchanged output touches nothing and notes no P2S300 on _p2s.apply" $?
grep -v "^# pylayer2static " "$proj/src/pkg/layers.py" > "$work/no_marker.py"
printf 'def g(o, x):\n    return _p2s.apply(o, x)\n' >> "$work/no_marker.py"
expect_rc "the runtime's own _p2s.apply in a file without the marker" 0 "$bin" --lint "$work/no_marker.py"
! grep -q P2S300 "$work/stdout"
check "_p2s.apply is never taken for an unresolved PyLayer call (P2S300)" $?
sed -i 's/def forward(ctx, x, scale=2.0):/def forward(ctx, x, scale=2.0, bias=0.0):/' "$proj/src/pkg/layers.py"
expect_rc "--check fails on a stale builder" 1 sh -c "cd '$proj' && '$bin' --check src/pkg/*.py"
grep -q "would rewrite src/pkg/layers.py" "$work/stderr" && ! grep -q "model.py" "$work/stderr"
check "--check names the file whose builder is stale, only it" $?
expect_rc "--in-place after a forward gained a parameter" 0 sh -c "cd '$proj' && '$bin' --in-place src/pkg/*.py"
grep -q "def _p2s_static_Q(x, scale=_p2s.DEFAULT, bias=_p2s.DEFAULT):" "$proj/src/pkg/layers.py" &&
    grep -q "_p2s.PyLayerOp(Q, (x, scale, bias), {})" "$proj/src/pkg/layers.py" &&
    [ "$(grep -c "_p2s_static_Q" "$proj/src/pkg/layers.py")" -eq 1 ]
check "the builder is regenerated with the new signature, once" $?
expect_rc "stdin named into the project" 0 sh -c "cd '$work/proj_orig' && '$bin' - --stdin-filename src/pkg/model.py < src/pkg/model.py"
cmp -s "$work/stdout" "$proj/src/pkg/model.py"
check "stdin with --stdin-filename resolves as the named file does" $?
printf 'from pkg.layers import Q\n\n\ndef f(x):\n    return Q.apply(x)\n' > "$work/proj_orig/src/pkg/absolute.py"
expect_rc "tree mode from the project root" 0 "$bin" --list "$work/proj_orig"
grep -q "src/pkg/absolute.py:5:12 apply Q$" "$work/stdout"
check "tree mode names src/pkg/absolute.py pkg.absolute, so from pkg.layers resolves" $?
mkdir -p "$work/proj_cfg/lib/pkg"
cp "$work/proj_orig/src/pkg/"*.py "$work/proj_cfg/lib/pkg/"
printf '[tool.pylayer2static]\nsrc = ["lib"]\n' > "$work/proj_cfg/pyproject.toml"
expect_rc "a configured src list" 0 sh -c "cd '$work/proj_cfg' && '$bin' --list lib/pkg/model.py"
grep -q "lib/pkg/model.py:7:12 apply Q$" "$work/stdout"
check "[tool.pylayer2static] src names the import roots" $?
printf '[tool.pylayer2static]\nsrc = ["lib"]\nexclude = ["lib/pkg/layers.py"]\n' > "$work/proj_cfg/pyproject.toml"
expect_rc "an excluded sibling is not read" 0 sh -c "cd '$work/proj_cfg' && '$bin' --list lib/pkg/model.py"
[ ! -s "$work/stdout" ]
check "exclude applies to the siblings a file reaches, as to tree mode's walk" $?
# a file list spanning two projects: each file is run with its own project's configuration and
# import roots (the namespace packages below are found through `src` only), whatever the order
multi="$work/multi"
for p in a b; do
    mkdir -p "$multi/$p/lib/ns$p"
    cp "$work/proj_orig/src/pkg/layers.py" "$multi/$p/lib/ns$p/layers.py"
    printf 'from ns%s.layers import Q\n\n\ndef f(x):\n    return Q.apply(x)\n' "$p" > "$multi/$p/lib/ns$p/use.py"
    printf 'from paddle.autograd import PyLayer\n\n\ndef g(layer_cls, x):\n    return layer_cls.apply(x)\n' > "$multi/$p/lib/ns$p/dyn.py"
done
printf '[tool.pylayer2static]\nsrc = ["lib"]\n' > "$multi/a/pyproject.toml"
printf '[tool.pylayer2static]\nsrc = ["lib"]\nignore = ["P2S300"]\n' > "$multi/b/pyproject.toml"
expect_rc "--list over files of two projects" 0 sh -c "cd '$multi' && '$bin' --list b/lib/nsb/use.py a/lib/nsa/use.py"
[ "$(cat "$work/stdout")" = "b/lib/nsb/use.py:5:12 apply Q
a/lib/nsa/use.py:5:12 apply Q" ]
check "each file of a list resolves through its own project's import roots (got $(head -c 200 "$work/stdout"))" $?
expect_rc "--lint over files of two projects" 0 sh -c "cd '$multi' && '$bin' --lint a/lib/nsa/dyn.py b/lib/nsb/dyn.py"
grep -q "^a/lib/nsa/dyn.py:5:12: note\[P2S300\]" "$work/stdout" && ! grep -q "nsb" "$work/stdout"
check "each file of a list is checked with its own project's configuration" $?

# tree mode finds modules in import order and finishes each as it is found (tree.c); resolution
# still checks every module's misses, so what the order does not see comes out right: an
# import behind `if True:` (the scan misses it), a subclass through a package's re-export, a
# package whose exported class shadows its own submodule (a module finished early, then found
# and finished again), an import cycle of big modules past the 512 KiB of trees kept for
# finishing (parked, parsed again). A file list rewritten in place, each file with its own
# context (no order) and reading the siblings rewritten before it, gives the same files.
order="$work/order"
mkdir -p "$order/src/pkg"
printf '[project]\nname = "pkg"\n' > "$order/pyproject.toml"
"$python" - "$order/src/pkg" <<'EOF'
import os
import sys

def layer(name, base="PyLayer"):
    return (f"class {name}({base}):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n\n"
            "    @staticmethod\n    def backward(ctx, dy):\n        return dy * 2\n\n\n")

files = {
    "__init__.py": "from .base import Base\nfrom .impl import Impl as sub\n",
    "base.py": "from paddle.autograd import PyLayer\n\n\n" + layer("Base"),
    "impl.py": "from paddle.autograd import PyLayer\n\n\n" + layer("Impl"),
    "sub.py": "x = 1\n",
    "mid.py": "from pkg import Base\n\n\n" + layer("Mid", "Base") + "def f(x):\n    return Mid.apply(x) + Base.apply(x)\n",
    "hidden.py": "if True: from .mid import Mid as Hidden\n\n\n" + layer("Deeper", "Hidden")
                 + "def g(x):\n    return Hidden.apply(x) + Deeper.apply(x)\n",
    "uses_hidden.py": "from .hidden import Deeper\n\n\ndef h(x):\n    return Deeper.apply(x)\n",
    "shadowed.py": "from paddle.autograd import PyLayer\nfrom pkg import sub\n"
                   + "# padding: the biggest small module, found first\n" * 40 + "\n\n" + layer("Own")
                   + "def k(x):\n    return sub.apply(Own.apply(x))\n",
}
for i in range(4):
    after = (i + 1) % 4
    files[f"cyc{i}.py"] = (f"from paddle.autograd import PyLayer\nfrom . import cyc{after}\n\n\n"
                           + "".join(layer(f"C{i}_{k}") for k in range(900))
                           + "def run(x):\n" + "".join(f"    x = cyc{after}.C{after}_{k}.apply(x)\n" for k in range(0, 900, 9))
                           + "    return x\n")
for name, text in files.items():
    with open(os.path.join(sys.argv[1], name), "w") as f:
        f.write(text)
EOF
cp -r "$order" "$work/order_list"
expect_rc "tree mode over modules out of import order, -j1" 0 "$bin" "$order/src" -o "$work/order_j1" -j1
expect_rc "tree mode over modules out of import order, -j2" 0 "$bin" "$order/src" -o "$work/order_j2" -j2
expect_rc "the same modules as a file list, in place" 0 sh -c "cd '$work/order_list' && '$bin' --in-place src/pkg/*.py"
diff -r "$work/order_j1" "$work/order_j2" >/dev/null && diff -r "$work/order_j1" "$work/order_list/src" >/dev/null
check "tree mode in import order: -j1, -j2 and a file list in place give identical files" $?
grep -q "return _p2s.apply(Hidden, x) + _p2s.apply(Deeper, x)$" "$work/order_j1/pkg/hidden.py" &&
    grep -q "return _p2s.apply(Deeper, x)$" "$work/order_j1/pkg/uses_hidden.py" &&
    grep -q "return _p2s.apply(Mid, x) + _p2s.apply(Base, x)$" "$work/order_j1/pkg/mid.py" &&
    grep -q "return _p2s.apply(sub, _p2s.apply(Own, x))$" "$work/order_j1/pkg/shadowed.py" &&
    (for i in 0 1 2 3; do [ "$(grep -c "x = _p2s.apply(cyc" "$work/order_j1/pkg/cyc$i.py")" -eq 100 ] || exit 1; done)
check "imports the order missed, re-exports, a shadowed submodule and a cycle all resolve" $?

# argument checks on calls of another module's PyLayer: forward's signature travels with the
# export (and a re-export), so tree mode, a file list and a single file report alike
args="$work/args"
mkdir -p "$args/src/pkg"
printf '[project]\nname = "pkg"\n' > "$args/pyproject.toml"
printf 'from .layers import Scale\n' > "$args/src/pkg/__init__.py"
printf 'import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass Scale(PyLayer):\n    @staticmethod\n    def forward(ctx, x, /, k=2.0, *, bias=0.0):\n        return x * k + bias\n\n    @staticmethod\n    def backward(ctx, dy):\n        return dy * 2.0\n' > "$args/src/pkg/layers.py"
printf 'import paddle\nfrom pkg import Scale\nfrom pkg.layers import Scale as S\n\n\ndef run(x):\n    a = Scale.apply(x, 3.0, 4.0)\n    b = S.apply(x=x)\n    return S.apply(x, bias=1.0) + a + b\n' > "$args/src/pkg/model.py"
want_args="src/pkg/model.py:7:29: error[P2S111]: 'Scale.apply' takes from 1 to 2 positional argument(s) but 3 were given
src/pkg/model.py:8:16: error[P2S112]: 'S.apply' is missing the required argument 'x'
src/pkg/model.py:8:17: error[P2S110]: 'S.apply' got an unexpected keyword argument 'x'"
for how in "tree mode:." "a file list:src/pkg/layers.py src/pkg/model.py" "a single file:src/pkg/model.py"; do
    # shellcheck disable=SC2086
    expect_rc "${how%%:*}: another module's forward binds the call's arguments" 1 \
        sh -c "cd '$args' && '$bin' --lint --color=never ${how#*:}"
    [ "$(grep '^\(\./\)\?src/pkg/model.py:.*error' "$work/stdout" | sed 's|^\./||')" = "$want_args" ]
    check "${how%%:*}: P2S111, P2S112 and P2S110 on another module's PyLayer, '/' honoured (got $(head -c 300 "$work/stdout"))" $?
done
expect_rc "tree mode with argument errors on another module's PyLayer" 1 "$bin" "$args" -o "$work/args_out"
grep -q "    a = Scale.apply(x, 3.0, 4.0)$" "$work/args_out/src/pkg/model.py" &&
    grep -q "    b = S.apply(x=x)$" "$work/args_out/src/pkg/model.py" &&
    grep -q "    return _p2s.apply(S, x, bias=1.0) + a + b$" "$work/args_out/src/pkg/model.py"
check "the calls at fault stay as written, the others are transpiled" $?

# a class that breaks its contract after it was transpiled: its calls come back as written
sed -i '/@staticmethod/{N;s/    @staticmethod\n    def backward/    def backward/}' "$proj/src/pkg/layers.py"
expect_rc "a contract error introduced after transpiling" 1 sh -c "cd '$proj' && '$bin' --in-place src/pkg/*.py"
grep -q "P2S103" "$work/stderr" && cmp -s "$proj/src/pkg/model.py" "$work/model_as_written.py" &&
    ! grep -q "_p2s_static_Q" "$proj/src/pkg/layers.py"
check "its builder goes and the sibling's calls are as the user wrote them again" $?

# --- selection and suppression
hazard="$work/hazard.py"
printf 'import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass H(PyLayer):\n    @staticmethod\n    def forward(ctx, x):\n        n = x.numpy()\n        k = x.item()  # noqa: P2S202\n        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n' > "$hazard"
expect_rc "hazards are warnings" 0 "$bin" --lint "$hazard"
grep -q "warning\[P2S201\]" "$work/stdout" && ! grep -q "P2S202" "$work/stdout"
check "noqa with a code silences that line only" $?
expect_rc "--ignore a prefix" 0 "$bin" --lint --ignore P2S2 "$hazard"
[ ! -s "$work/stdout" ]
check "--ignore P2S2 hides the hazard warnings" $?
expect_rc "--select another code" 0 "$bin" --lint --select P2S1,P2S3 "$hazard"
[ ! -s "$work/stdout" ]
check "--select keeps only the selected codes" $?
expect_rc "--select an unknown code is a usage error" 2 "$bin" --select P2S9X "$hazard"
grep -q "^pylayer2static: error: --select: unknown rule selector 'P2S9X'" "$work/stderr"
check "an unknown selector is named" $?
mkdir -p "$work/selcfg"
printf '[tool.pylayer2static]\nignore = ["P2S201"]\n' > "$work/selcfg/pyproject.toml"
cp "$hazard" "$work/selcfg/h.py"
expect_rc "config ignore applies" 0 "$bin" --lint "$work/selcfg/h.py"
[ ! -s "$work/stdout" ]
check "[tool.pylayer2static] ignore hides P2S201" $?
expect_rc "--select on the command line replaces the config's" 0 "$bin" --lint --select P2S201 "$work/selcfg/h.py"
grep -q "P2S201" "$work/stdout"
check "--select P2S201 overrides the config ignore" $?
expect_rc "syntax errors cannot be ignored" 1 "$bin" --ignore ALL "$work/bad.py"

# --- configuration
cfg="$work/cfg"
mkdir -p "$cfg/proj/src"
cp "$sample" "$cfg/proj/src/m.py"
printf '[project]\nname = "x"\n\n[tool.pylayer2static]\nexclude = ["gen_*.py"]\njobs = 2\nrules = "extra.json"\n' > "$cfg/proj/pyproject.toml"
printf '{"pylayer_bases": ["mylib.Base"]}\n' > "$cfg/proj/extra.json"
printf 'from mylib import Base\n\n\nclass L(Base):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n\n\nL.apply(1)\n' > "$cfg/proj/src/custom.py"
expect_rc "config rules file is found and read" 0 "$bin" --list "$cfg/proj/src/custom.py"
grep -q "apply L" "$work/stdout"
check "[tool.pylayer2static] rules add PyLayer bases" $?
expect_rc "--no-config ignores it" 0 "$bin" --no-config --list "$cfg/proj/src/custom.py"
[ ! -s "$work/stdout" ]
check "--no-config reads no pyproject.toml" $?
printf '[tool.pylayer2static]\nselct = ["P2S1"]\n' > "$cfg/bad.toml"
expect_rc "unknown config key is a configuration error" 2 "$bin" --config "$cfg/bad.toml" "$sample"
grep -q "bad.toml:2:1: error: unknown key" "$work/stderr"
check "config errors say file:line:col" $?
printf '{"pylayer_bases": [1]}' > "$cfg/bad_rules.json"
expect_rc "bad rules file is exit 2" 2 "$bin" --rules "$cfg/bad_rules.json" "$sample"
grep -q "bad_rules.json: /pylayer_bases/0:" "$work/stderr"
check "rules shape errors name the JSON path" $?
printf '{"pylayer_bases": [}' > "$cfg/bad_syntax.json"
expect_rc "rules JSON syntax error is exit 2" 2 "$bin" --rules "$cfg/bad_syntax.json" "$sample"
grep -q "bad_syntax.json:1:20: error: invalid JSON" "$work/stderr"
check "rules syntax errors say file:line:col" $?

# --- the sources' structure: no module includes, through others, a module that includes it
out=$("$python" "$root/tests/include_cycles.py" "$root/src")
check "no include cycle among src modules ($out)" $?
mkdir -p "$work/cycle"
printf '#include "b.h"\n' > "$work/cycle/a.h"
printf '#include "a.h"\n' > "$work/cycle/b.c"
out=$("$python" "$root/tests/include_cycles.py" "$work/cycle")
[ $? -eq 1 ] && [ "$out" = "include cycle: a -> b -> a" ]
check "the include-cycle check reports a cycle's path (got $out)" $?

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
