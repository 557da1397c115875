"""Protocol-level tests of `pylayer2static lsp`, driving the server over pipes.

    python3 tests/lsp/test_protocol.py BIN [--wrap 'valgrind --error-exitcode=99 ...']

Standard library only. Diagnostics are compared with the command line's own JSON output
(`--lint --output-format json`) for the same text: one source of truth. Prints one line per
failure and `lsp: N passed, N failed` at the end.
"""
import contextlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lsp_client import Client  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "model.py")
BIN = None
WRAP = []
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def server(cwd=None):
    return Client(WRAP + [BIN, "lsp"], cwd=cwd)


def uri_of(path):
    return "file://" + path


def utf16_col(line_text, codepoint_col0):
    return len(line_text[:codepoint_col0].encode("utf-16-le")) // 2


def cli_tuples(items, text):
    """The CLI's JSON diagnostics of text as LSP would show them (0-based UTF-16 ranges)."""
    lines = text.splitlines()
    result = []
    for d in items:
        def pos(line, col):
            if line is None:  # about the file as a whole
                return {"line": 0, "character": 0}
            lt = lines[line - 1] if line - 1 < len(lines) else ""
            return {"line": line - 1, "character": utf16_col(lt, col - 1)}
        message = d["message"] + ("\nhelp: " + d["fix"] if d["fix"] else "")
        sev = {"error": 1, "warning": 2, "note": 3}[d["severity"]]
        result.append((d["code"], sev, message, pos(d["line"], d["col"]), pos(d["end_line"], d["end_col"])))
    return result


def cli_diagnostics(text, name="x.py", extra=()):
    """The CLI's JSON diagnostics for text, as LSP would show them (0-based UTF-16 ranges)."""
    out = subprocess.run([BIN, "--lint", "--no-config", "--output-format", "json", "--stdin-filename", name,
                          *extra, "-"], input=text.encode(), capture_output=True).stdout
    return cli_tuples(json.loads(out), text)


def lsp_tuples(diags):
    return [(d.get("code"), d["severity"], d["message"], d["range"]["start"], d["range"]["end"]) for d in diags]


def open_doc(c, uri, text, version=1):
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                      "text": text}})
    return c.diagnostics(uri, version)


def change(c, uri, version, changes):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes})
    return c.diagnostics(uri, version)


def position_of(text, needle, nth=0):
    """LSP position (UTF-16) of the nth occurrence of needle."""
    idx = -1
    for _ in range(nth + 1):
        idx = text.index(needle, idx + 1)
    line = text.count("\n", 0, idx)
    start = text.rfind("\n", 0, idx) + 1
    return {"line": line, "character": utf16_col(text[start:], idx - start)}


def apply_edits(text, edits):
    """Applies LSP TextEdits (UTF-16 positions) to text, last first."""
    def offset(pos):
        lines = text.split("\n")
        base = sum(len(l) + 1 for l in lines[:pos["line"]])
        line = lines[pos["line"]] if pos["line"] < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos["character"]:
                return base + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return base + len(line)
    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        a, b = offset(e["range"]["start"]), offset(e["range"]["end"])
        text = text[:a] + e["newText"] + text[b:]
    return text


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def fixture_text():
    with open(FIXTURE, encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------- lifecycle and robustness

@test
def initialize_announces_incremental_utf16_sync():
    c = server()
    try:
        r = c.initialize()["result"]
        caps = r["capabilities"]
        check(caps["textDocumentSync"]["change"] == 2, "incremental sync")
        check(caps["positionEncoding"] == "utf-16", "utf-16")
        check(caps["hoverProvider"] and caps["documentSymbolProvider"], "hover, symbols")
        check("pylayer2static.showStaticForm" in caps["executeCommandProvider"]["commands"], "command")
        resp, code = c.shutdown()
        check(resp.get("result", 1) is None and code == 0, "shutdown then exit: status 0, got %r" % code)
    finally:
        c.kill()


@test
def requests_before_initialize_are_refused():
    c = server()
    try:
        r = c.request("textDocument/hover", {"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}})
        check(r["error"]["code"] == -32002, r)
        c.initialize()
        r = c.request("initialize", {"capabilities": {}})
        check(r["error"]["code"] == -32600, "second initialize: %r" % r)
    finally:
        c.kill()


@test
def malformed_messages_get_jsonrpc_errors_and_the_server_goes_on():
    c = server()
    try:
        c.initialize()
        c.send_raw(b"Content-Length: 9\r\n\r\n{not json")
        check(c.read_message()["error"]["code"] == -32700, "parse error")
        c.send_raw(b"Content-Length: 2\r\n\r\n[]")
        check(c.read_message()["error"]["code"] == -32600, "array")
        c.send_raw(b"Content-Length: 4\r\n\r\nnull")
        check(c.read_message()["error"]["code"] == -32600, "null")
        c.send({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "x"})
        check(c.read_message()["error"]["code"] == -32600, "object id")
        c.send({"jsonrpc": "2.0", "id": 7, "method": 42})
        check(c.read_message()["error"]["code"] == -32600, "numeric method")
        c.send_raw(b"Content-Type: application/json\r\n\r\n")
        check(c.read_message()["error"]["code"] == -32700, "header without length")
        c.send_raw(b"Content-Length: 12x\r\n\r\n")
        check(c.read_message()["error"]["code"] == -32700, "bad length")
        r = c.request("no/such/method", {})
        check(r["error"]["code"] == -32601, "method not found: %r" % r)
        c.notify("no/such/notification", {"a": 1})
        c.notify("$/cancelRequest", {"id": 99})
        c.send({"jsonrpc": "2.0", "id": 55, "result": None})  # a response nobody asked for
        r = c.request("textDocument/documentSymbol", {"textDocument": {"uri": "file:///never-opened.py"}})
        check(r.get("result") == [], "symbols of an unknown document: %r" % r)
        r = c.request("textDocument/hover", {"textDocument": 5, "position": "x"})
        check("result" in r and r["result"] is None, "hover with wrong params: %r" % r)
        c.send_raw(b"x" * 10000)  # garbage longer than any header, then a valid message
        c.send({"jsonrpc": "2.0", "id": 1000, "method": "textDocument/documentSymbol",
                "params": {"textDocument": {"uri": "file:///none.py"}}})
        seen_error = False
        while True:
            m = c.read_message()
            if m.get("id") == 1000:
                break
            seen_error = seen_error or m.get("error", {}).get("code") == -32700
        check(seen_error, "garbage answered with a parse error")
        resp, code = c.shutdown()
        check(code == 0, "exit status %r" % code)
    finally:
        c.kill()


@test
def wrongly_typed_parameters_do_not_crash():
    c = server()
    try:
        c.initialize()
        uri = "file:///tmp/p2s-wrong.py"
        open_doc(c, uri, "x = 1\n")
        for params in [None, [], {"textDocument": None}, {"textDocument": {"uri": uri}, "contentChanges": 3},
                       {"textDocument": {"uri": uri, "version": "v"},
                        "contentChanges": [{"range": {"start": {"line": "a", "character": -5},
                                                      "end": {"line": 1e30, "character": None}}, "text": "y"},
                                           {"range": {"start": {"line": -1, "character": -1},
                                                      "end": {"line": -2, "character": 1e300}}, "text": 5},
                                           {"text": None}, 17]}]:
            c.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params})
        for method in ["textDocument/codeAction", "textDocument/hover", "workspace/executeCommand",
                       "textDocument/documentSymbol"]:
            r = c.request(method, {"textDocument": {"uri": uri}, "range": [], "position": {"line": 10**12,
                                                                                         "character": 10**12},
                                   "command": None, "arguments": [{}]})
            check("result" in r or "error" in r, "%s answered" % method)
        change(c, uri, 9, [{"range": {"start": {"line": 99, "character": 99}, "end": {"line": 100, "character": 0}},
                            "text": "\nz = 2\n"}])
        r = c.request("workspace/executeCommand", {"command": "pylayer2static.showStaticForm", "arguments": [uri]})
        check(r["result"] == "x = 1\n\nz = 2\n", "a position past the end appends: %r" % r)
        resp, code = c.shutdown()
        check(code == 0, "exit %r" % code)
    finally:
        c.kill()


@test
def binary_and_huge_documents_are_reported_not_fatal():
    c = server()
    try:
        c.initialize()
        d = open_doc(c, "file:///tmp/p2s-bin.py", "a = 1\x00\nb = 2\n")
        check([x.get("code") for x in d] == ["P2S002"], "NUL byte: %r" % d)
        check(d[0]["range"]["start"] == {"line": 0, "character": 5}, "at the NUL: %r" % d)
        d = change(c, "file:///tmp/p2s-bin.py", 2, [{"range": {"start": {"line": 0, "character": 5},
                                                               "end": {"line": 0, "character": 6}}, "text": ""}])
        check(d == [], "NUL removed: %r" % d)
        c.notify("textDocument/didChange", {"textDocument": {"uri": "file:///tmp/p2s-bin.py", "version": 3},
                                            "contentChanges": [{"text": "\udcff"}]})
        check(c.read_message()["error"]["code"] == -32700, "a lone surrogate (cJSON refuses it)")
        d = change(c, "file:///tmp/p2s-bin.py", 4, [{"text": "\ufffe\x7f\x01\x1b[0m\u2028" * 50}])
        check(all(x.get("code") in ("P2S001", "P2S003") for x in d), "binary junk: %r" % d)
        big = "x = 1\n" * (3 << 20)  # 18 MiB
        t0 = time.monotonic()
        d = open_doc(c, "file:///tmp/p2s-big.py", big)
        check(len(d) == 1 and d[0]["severity"] == 3 and "larger than" in d[0]["message"], "huge: %r" % d)
        check(time.monotonic() - t0 < 10, "huge document answered quickly")
        r = c.request("textDocument/documentSymbol", {"textDocument": {"uri": "file:///tmp/p2s-big.py"}})
        check(r["result"] == [], "no symbols for a huge document")
        c.send_raw(b"Content-Length: %d\r\n\r\n" % (65 << 20))  # above the 64 MiB message limit
        c.send_raw(b" " * (65 << 20))
        m = c.read_message(30)
        check(m["error"]["code"] == -32600, "oversized message: %r" % m)
        r = c.request("textDocument/documentSymbol", {"textDocument": {"uri": "file:///tmp/p2s-bin.py"}})
        check(r["result"] == [], "still serving after the oversized message")
        c.shutdown()
    finally:
        c.kill()


@test
def a_vanished_client_ends_the_server():
    c = server()
    try:
        c.initialize()
        open_doc(c, "file:///tmp/p2s-gone.py", fixture_text())
        c.send_raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")  # half a message, then gone
        c.proc.stdin.close()
        code = c.proc.wait(10)
        check(code == 1, "end of input without shutdown: status 1, got %r" % code)
    finally:
        c.kill()
    c = server()
    try:
        c.initialize()
        c.proc.stdout.close()  # nobody reads any more: the next write fails, the server ends
        for _ in range(200):
            try:
                c.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/p2s-w.py", "version": 1,
                                                                  "languageId": "python", "text": "x = 1\n"}})
                r = {"jsonrpc": "2.0", "id": 5, "method": "textDocument/documentSymbol",
                     "params": {"textDocument": {"uri": "file:///tmp/p2s-w.py"}}}
                c.send(r)
            except BrokenPipeError:
                break
            time.sleep(0.005)
        code = c.proc.wait(10)
        check(code in (0, 1), "closed output: clean exit, got %r" % code)
    finally:
        c.kill()


@test
def requests_after_shutdown_are_invalid():
    c = server()
    try:
        c.initialize()
        c.request("shutdown")
        r = c.request("textDocument/documentSymbol", {"textDocument": {"uri": "file:///x.py"}})
        check(r["error"]["code"] == -32600, r)
        c.notify("exit")
        check(c.proc.wait(10) == 0, "exit after shutdown: 0")
        c = server()
        c.initialize()
        c.notify("exit")
        check(c.proc.wait(10) == 1, "exit without shutdown: 1")
    finally:
        c.kill()


# ---------------------------------------------------------------- diagnostics

@test
def diagnostics_are_the_command_lines():
    c = server()
    try:
        c.initialize()
        text = fixture_text()
        d = open_doc(c, "file:///tmp/p2s-model.py", text)
        check(lsp_tuples(d) == cli_diagnostics(text), "LSP %r\nCLI %r" % (lsp_tuples(d), cli_diagnostics(text)))
        check(all(x["source"] == "pylayer2static" for x in d), "source")
        hazard = [x for x in d if x["code"] == "P2S201"][0]
        # `        s = "é😀"; v = y.numpy()`: the emoji counts two UTF-16 units
        check(hazard["range"]["start"] == {"line": 18, "character": 23}, "UTF-16 column: %r" % hazard["range"])
        c.shutdown()
    finally:
        c.kill()


@test
def an_edit_that_removes_a_hazard_removes_its_diagnostic():
    c = server()
    try:
        c.initialize()
        uri = "file:///tmp/p2s-edit.py"
        text = fixture_text()
        open_doc(c, uri, text)
        start = position_of(text, "y.numpy()")
        end = dict(start, character=start["character"] + len("y.numpy()"))
        d = change(c, uri, 2, [{"range": {"start": start, "end": end}, "text": "y + 1"}])
        check("P2S201" not in [x["code"] for x in d], "hazard gone: %r" % d)
        check("P2S103" in [x["code"] for x in d], "others kept")
        new_text = text.replace("y.numpy()", "y + 1")
        check(lsp_tuples(d) == cli_diagnostics(new_text), "same as the CLI after the edit")
        c.shutdown()
    finally:
        c.kill()


@test
def random_incremental_edits_match_a_fresh_open():
    rng = random.Random(12)
    c = server()
    try:
        c.initialize()
        uri, fresh = "file:///tmp/p2s-rand.py", "file:///tmp/p2s-fresh.py"
        text = fixture_text()
        open_doc(c, uri, text)
        pieces = ["x", "é", "😀", "\n", "    ", "(", ")", ".numpy()", "#", "\r\n", ""]
        for version in range(2, 60):
            lines = text.split("\n")
            li = rng.randrange(len(lines))
            line = lines[li]
            a = rng.randrange(len(line) + 1)
            b = min(len(line), a + rng.randrange(3))
            new = rng.choice(pieces)
            start = {"line": li, "character": utf16_col(line, a)}
            end = {"line": li, "character": utf16_col(line, b)}
            base = sum(len(l) + 1 for l in lines[:li])
            text = text[:base + a] + new + text[base + b:]
            c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                "contentChanges": [{"range": {"start": start, "end": end},
                                                                    "text": new}]})
        d1 = c.diagnostics(uri, 59)
        d2 = open_doc(c, fresh, text)
        check(lsp_tuples(d1) == lsp_tuples(d2), "incremental %r\nfresh %r" % (lsp_tuples(d1), lsp_tuples(d2)))
        s1 = c.request("workspace/executeCommand", {"command": "pylayer2static.showStaticForm", "arguments": [uri]})
        s2 = c.request("workspace/executeCommand", {"command": "pylayer2static.showStaticForm", "arguments": [fresh]})
        check(s1 == dict(s2, id=s1["id"]), "same static form")
        # The server's text is the client's: the static form of a file without PyLayers is itself.
        c.shutdown()
    finally:
        c.kill()


def kept_session(text, seed, edits):
    """Edits text at random, one change at a time, each compared with the CLI on the new text;
    the server runs with P2S_LSP_CHECK_REUSE=1 (a kept result that differs from a full analysis
    aborts it). Returns how many analyses kept their diagnostics (lsp_reuse.c)."""
    rng = random.Random(seed)
    # edits that mostly keep the file valid (renames, new statements), and any others
    names = ["z", "h", "1", "é", "alias", "Twice", "Child", "act", "layer", "ctx", "x"]
    statements = ["k = h", "t = Twice", "h = x", "alias = Child", "act = k", "x = ctx.saved_tensor()", "return h"]
    wild = ["apply", ".apply(h)", "class ", "import os\n", "(", ")", "\n", "    ", "# noqa", "  # NOQA: P2S110",
            "lambda: 0", "global h\n        ", " := ", "\r", "'", '"""', "ctx.save_for_backward(x)\n        ",
            "return x\n", "PyLayer", "@staticmethod\n    "]
    undos = []          # inverses of the edits since the text last parsed, newest last
    undo = False
    log = tempfile.NamedTemporaryFile(prefix="p2s-kept-", suffix=".log")
    os.environ["P2S_LSP_CHECK_REUSE"] = "1"
    try:
        c = Client(WRAP + [BIN, "lsp"], stderr=log)
    finally:
        del os.environ["P2S_LSP_CHECK_REUSE"]
    try:
        c.initialize()
        uri = "file:///tmp/p2s-kept-%d.py" % seed
        d = open_doc(c, uri, text)
        check(lsp_tuples(d) == cli_diagnostics(text), "open")
        for version in range(2, edits + 2):
            # lines as LSP counts them: \n, \r\n and a lone \r end one
            breaks = list(re.finditer(r"\r\n|\r|\n", text))
            starts = [0] + [m.end() for m in breaks]
            ends = [m.start() for m in breaks] + [len(text)]

            def pos(offset):
                li = max(k for k, st in enumerate(starts) if st <= offset)
                return {"line": li, "character": utf16_col(text[starts[li]:ends[li]], offset - starts[li])}
            mode = 0
            if undo:
                a, b, new = undos.pop()
            else:
                body = [k for k in range(len(starts)) if text.startswith("        ", starts[k])]
                li = rng.choice(body) if body and rng.random() < 0.75 else rng.randrange(len(starts))
                line = text[starts[li]:ends[li]]
                word = [starts[li] + k for k in range(1, len(line)) if (line[k - 1].isalnum() or line[k - 1] == "_")]
                mode = rng.random()
                if mode < 0.4 and word:    # an identifier grows, shrinks or changes
                    a = rng.choice(word)
                    b = a + (rng.random() < 0.5 and (text[a].isalnum() or text[a] == "_"))
                    new = rng.choice(names + [""])
                elif mode < 0.6:           # a new statement after a line
                    indent = line[:len(line) - len(line.lstrip())] + ("    " if line.rstrip().endswith(":") else "")
                    a = b = ends[li]
                    new = "\n" + indent + rng.choice(statements)
                else:                      # anything, mostly undone by the next edit
                    a = starts[li] + rng.randrange(ends[li] - starts[li] + 1)
                    b = min(ends[li], a + rng.choice([0, 0, 1, 2, 6]))
                    new = rng.choice(wild + names)
            start, end = pos(a), pos(b)
            if not undo:
                undos.append((a, a + len(new), text[a:b]))
            text = text[:a] + new + text[b:]
            d = change(c, uri, version, [{"range": {"start": start, "end": end}, "text": new}])
            want = cli_diagnostics(text)
            check(lsp_tuples(d) == want, "after edit %d (%r at %d-%d)\nLSP %r\nCLI %r"
                  % (version, new, a, b, lsp_tuples(d), want))
            broken = any(w[0] in ("P2S001", "P2S005", "P2S006") for w in want)
            wild_edit = not undo and mode >= 0.6
            if not broken:
                undos = undos[-1:] if wild_edit else []
            undo = bool(undos) and (broken or wild_edit) and rng.random() < 0.8   # broken, then fixed
        resp, code = c.shutdown(timeout=60)
        check(code == 0, "exit status %r (99: valgrind found errors or leaks)" % code)
    finally:
        c.kill()
    with open(log.name, encoding="utf-8") as f:
        report = f.read()
    check("differ" not in report, report)
    return report.count("kept the diagnostics")


@test
def kept_diagnostics_are_a_full_analysis_after_random_edits():
    with open(os.path.join(HERE, "fixtures", "reuse.py"), encoding="utf-8") as f:
        text = f.read()
    edits = 30 if WRAP else 150
    kept = 0
    # as written, a class left as written meets an unresolved .apply (nothing may be kept); without
    # that call, most body edits keep the diagnostics
    for seed, variant in enumerate([text, text.replace("w = layer.apply(y)", "w = y")] * 2):
        kept += kept_session(variant, seed, edits)
    check(kept >= (1 if WRAP else edits // 10), "only %d analyses kept their diagnostics" % kept)


@test
def noqa_and_configuration_are_honoured():
    tmp = tempfile.mkdtemp(prefix="p2s-lsp-")
    try:
        with open(os.path.join(tmp, "pyproject.toml"), "w") as f:
            f.write('[tool.pylayer2static]\nignore = ["P2S300"]\n')
        path = os.path.join(tmp, "m.py")
        text = fixture_text().replace("v = y.numpy()", "v = y.numpy()  # noqa: P2S201")
        with open(path, "w") as f:
            f.write(text)
        c = server()
        try:
            c.initialize()
            d = open_doc(c, uri_of(path), text)
            codes = [x["code"] for x in d]
            check("P2S201" not in codes, "noqa: %r" % codes)
            check("P2S300" not in codes, "pyproject ignore: %r" % codes)
            check("P2S103" in codes, "the rest: %r" % codes)
            c.notify("workspace/didChangeConfiguration", {"settings": {"pylayer2static": {"ignore": ["P2S103"],
                                                                                          "warn": ["P2S1"]}}})
            d = c.diagnostics(uri_of(path))
            codes = [x["code"] for x in d]
            check("P2S103" not in codes and "P2S300" not in codes, "settings add to the file: %r" % codes)
            c.notify("workspace/didChangeConfiguration", {"settings": {"pylayer2static": {"noConfig": True}}})
            d = c.diagnostics(uri_of(path))
            check("P2S300" in [x["code"] for x in d], "noConfig: %r" % d)
            c.shutdown()
        finally:
            c.kill()
    finally:
        shutil.rmtree(tmp)


# ---------------------------------------------------------------- code actions, hover, symbols

@test
def quick_fix_adds_staticmethod_and_the_error_goes():
    c = server()
    try:
        c.initialize()
        uri = "file:///tmp/p2s-fix.py"
        text = fixture_text()
        d = open_doc(c, uri, text)
        diag = [x for x in d if x["code"] == "P2S103"][0]
        r = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diag["range"],
                                                  "context": {"diagnostics": [diag], "only": ["quickfix"]}})
        actions = r["result"]
        fix = [a for a in actions if a["title"] == "Add @staticmethod"]
        check(fix and fix[0]["kind"] == "quickfix" and fix[0].get("isPreferred"), "the fix: %r" % actions)
        check(all(a["kind"] == "quickfix" for a in actions), "only quickfix")
        new_text = apply_edits(text, fix[0]["edit"]["changes"][uri])
        check("    @staticmethod\n    def forward(ctx, x, factor=2.0):" in new_text, new_text[:200])
        d = change(c, uri, 2, [{"text": new_text}])
        check("P2S103" not in [x["code"] for x in d], "fixed: %r" % d)
        hazard = [x for x in d if x["code"] == "P2S201"][0]
        r = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": hazard["range"],
                                                  "context": {"diagnostics": [hazard]}})
        noqa = [a for a in r["result"] if "noqa" in a["title"]]
        check(noqa, "noqa action: %r" % r)
        check(any(a["kind"] == "source" and a["command"]["command"] == "pylayer2static.showStaticForm"
                  for a in r["result"]), "static form action")
        newer = apply_edits(new_text, noqa[0]["edit"]["changes"][uri])
        d = change(c, uri, 3, [{"text": newer}])
        check("P2S201" not in [x["code"] for x in d], "noqa applied: %r" % d)
        check(lsp_tuples(d) == cli_diagnostics(newer), "as the CLI")
        c.shutdown()
    finally:
        c.kill()


@test
def quick_fix_adds_ctx():
    c = server()
    try:
        c.initialize()
        uri = "file:///tmp/p2s-ctx.py"
        text = ("from paddle.autograd import PyLayer\n\nclass A(PyLayer):\n    @staticmethod\n"
                "    def forward():\n        return 1\n\n    @staticmethod\n    def backward(ctx, dy):\n"
                "        return dy\n")
        d = open_doc(c, uri, text)
        diag = [x for x in d if x["code"] == "P2S104"]
        check(diag, "P2S104: %r" % d)
        r = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diag[0]["range"],
                                                  "context": {"diagnostics": diag}})
        fix = [a for a in r["result"] if "ctx" in a["title"]]
        check(fix, "ctx fix: %r" % r)
        new_text = apply_edits(text, fix[0]["edit"]["changes"][uri])
        check("def forward(ctx):" in new_text, new_text)
        d = change(c, uri, 2, [{"text": new_text}])
        check("P2S104" not in [x["code"] for x in d], "fixed: %r" % d)
        c.shutdown()
    finally:
        c.kill()


@test
def hover_on_apply_shows_forward_slots_and_backward():
    c = server()
    try:
        c.initialize()
        uri = "file:///tmp/p2s-hover.py"
        text = fixture_text()
        open_doc(c, uri, text)
        pos = position_of(text, "Tanh.apply")
        pos["character"] += 6
        r = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos})
        value = r["result"]["contents"]["value"]
        for part in ["PyLayer `Tanh`", "def forward(ctx, x, func1=paddle.tanh)", "def backward(ctx, dy)",
                     "Tensor slots", "`func1` ← `paddle.tanh`", "`x` ← `x`", "one gradient per tensor slot"]:
            check(part in value, "%r not in hover:\n%s" % (part, value))
        pos = position_of(text, "layer.apply")
        r = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos})
        check("does not resolve" in r["result"]["contents"]["value"], r)
        r = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
        check(r["result"] is None, "no hover elsewhere")
        c.shutdown()
    finally:
        c.kill()


@test
def document_symbols_list_pylayers():
    c = server()
    try:
        c.initialize()
        uri = "file:///tmp/p2s-sym.py"
        open_doc(c, uri, fixture_text())
        r = c.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
        names = [(s["name"], [ch["name"] for ch in s["children"]]) for s in r["result"]]
        check(names == [("Scale", ["forward", "backward"]), ("Tanh", ["forward", "backward"])], names)
        check(r["result"][1]["selectionRange"]["start"] == {"line": 14, "character": 6}, r["result"][1])
        c.shutdown()
    finally:
        c.kill()


@test
def show_static_form_is_the_command_lines_output():
    c = server()
    try:
        c.initialize()
        uri = "file:///tmp/p2s-static.py"
        text = fixture_text()
        open_doc(c, uri, text)
        r = c.request("workspace/executeCommand", {"command": "pylayer2static.showStaticForm", "arguments": [uri]})
        cli = subprocess.run([BIN, "--no-config", "-"], input=text.encode(), capture_output=True).stdout.decode()
        check(r["result"] == cli, "static form differs from the CLI's output")
        check("_p2s.apply(Tanh, x" in r["result"], "transpiled")
        r = c.request("workspace/executeCommand", {"command": "nope", "arguments": []})
        check(r["error"]["code"] == -32602, r)
        bad = "file:///tmp/p2s-syntax.py"
        open_doc(c, bad, "def f(:\n")
        r = c.request("workspace/executeCommand", {"command": "pylayer2static.showStaticForm", "arguments": [bad]})
        check("error" in r, "syntax error: no static form")
        c.notify("textDocument/didClose", {"textDocument": {"uri": bad}})
        check(c.diagnostics(bad) == [], "closing clears diagnostics")
        c.shutdown()
    finally:
        c.kill()


# ---------------------------------------------------------------- across files

def write_package(pkg, text):
    """Package pkg: __init__.py, ops.py defining the PyLayer Double, use.py holding text; the
    path of use.py."""
    os.makedirs(pkg)
    open(os.path.join(pkg, "__init__.py"), "w").close()
    use = os.path.join(pkg, "use.py")
    with open(use, "w") as f:
        f.write(text)
    with open(os.path.join(pkg, "ops.py"), "w") as f:
        f.write("import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass Double(PyLayer):\n"
                "    @staticmethod\n    def forward(ctx, x, k=2):\n        return x * k\n\n"
                "    @staticmethod\n    def backward(ctx, dy):\n        return dy * 2\n")
    return use


def write_src_project(tmp, text):
    """A project at tmp named pkg in the src layout (pyproject.toml, src/pkg as write_package
    makes it); the path of use.py."""
    with open(os.path.join(tmp, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "pkg"\n')
    return write_package(os.path.join(tmp, "src", "pkg"), text)


def lint_codes(args, cwd=None):
    """The codes `--lint --output-format json ARGS` reports for use.py."""
    out = subprocess.run([BIN, "--lint", "--output-format", "json"] + args, capture_output=True, cwd=cwd).stdout
    return [x["code"] for x in json.loads(out) if x["file"].endswith("use.py")]


@test
def a_pylayer_from_a_sibling_module_is_resolved():
    tmp = tempfile.mkdtemp(prefix="p2s-ws-")
    try:
        pkg = os.path.join(tmp, "pkg")
        text = "import paddle\nfrom paddle.autograd import PyLayer\nfrom .ops import Double\n\n\ndef f(x, other):\n    y = Double.apply(x)\n    return other.apply(y)\n"
        use = write_package(pkg, text)
        c = server()
        try:
            c.initialize()  # no folder: Double does not resolve
            d = open_doc(c, uri_of(use), text)
            check(len([x for x in d if x["code"] == "P2S300"]) == 2, "lone file: %r" % d)
            c.shutdown()
        finally:
            c.kill()
        c = server()
        try:
            c.initialize(uri_of(tmp))
            d = open_doc(c, uri_of(use), text)
            notes = [x for x in d if x["code"] == "P2S300"]
            check(len(notes) == 1 and notes[0]["range"]["start"]["line"] == 7, "workspace: %r" % d)
            cli_codes = lint_codes([tmp])
            check(cli_codes == [x["code"] for x in d], "tree mode agrees: %r" % cli_codes)
            pos = position_of(text, "Double.apply")
            r = c.request("textDocument/hover", {"textDocument": {"uri": uri_of(use)}, "position": pos})
            value = r["result"]["contents"]["value"]
            check("PyLayer `Double`" in value and "pkg.ops" in value and "def forward(ctx, x, k=2)" in value, value)
            s = c.request("workspace/executeCommand", {"command": "pylayer2static.showStaticForm",
                                                       "arguments": [uri_of(use)]})
            check("_p2s.apply(Double, x)" in s["result"], s["result"])
            # A PyLayer renamed in the sibling and saved: the index follows.
            ops_text = open(os.path.join(pkg, "ops.py")).read().replace("Double", "Twice")
            with open(os.path.join(pkg, "ops.py"), "w") as f:
                f.write(ops_text)
            open_doc(c, uri_of(os.path.join(pkg, "ops.py")), ops_text)
            c.notify("textDocument/didSave", {"textDocument": {"uri": uri_of(os.path.join(pkg, "ops.py"))}})
            d = c.diagnostics(uri_of(use))
            check(len([x for x in d if x["code"] == "P2S300"]) == 2, "after the rename: %r" % d)
            c.shutdown()
        finally:
            c.kill()
    finally:
        shutil.rmtree(tmp)


@test
def a_src_layout_project_names_modules_as_the_cli_does():
    """Rooted at a project with pyproject.toml and src/pkg: `from pkg.ops import ...` resolves in
    the server, in tree mode from the root, and for the file alone, alike."""
    tmp = tempfile.mkdtemp(prefix="p2s-src-")
    try:
        text = "import paddle\nfrom pkg.ops import Double\n\n\ndef f(x, other):\n    y = Double.apply(x)\n    return other.apply(y)\n"
        use = write_src_project(tmp, text)
        c = server()
        try:
            c.initialize(uri_of(tmp))
            d = open_doc(c, uri_of(use), text)
            notes = [x for x in d if x["code"] == "P2S300"]
            check(len(notes) == 1 and notes[0]["range"]["start"]["line"] == 6, "server: %r" % d)
            for target in (tmp, use):
                codes = lint_codes([target], cwd=tmp)
                check(codes == [x["code"] for x in d], "%s agrees: %r" % (target, codes))
            r = c.request("textDocument/hover", {"textDocument": {"uri": uri_of(use)},
                                                 "position": position_of(text, "Double.apply")})
            value = r["result"]["contents"]["value"]
            check("pkg.ops" in value and "src.pkg" not in value, value)
            c.shutdown()
        finally:
            c.kill()
    finally:
        shutil.rmtree(tmp)


@test
def a_sibling_modules_pylayer_has_its_arguments_checked_and_bound_in_the_hover():
    """forward's signature travels with the sibling's export: the server reports P2S111 on a call
    of it as tree mode does, and the hover binds the call's arguments under the class's own
    module name (pkg.ops, not src.pkg.ops)."""
    tmp = tempfile.mkdtemp(prefix="p2s-args-")
    try:
        text = ("import paddle\nfrom pkg.ops import Double\n\n\ndef f(x):\n    y = Double.apply(x, 3, 4)\n"
                "    return Double.apply(x, k=5)\n")
        use = write_src_project(tmp, text)
        c = server()
        try:
            c.initialize(uri_of(tmp))
            d = open_doc(c, uri_of(use), text)
            errors = [x for x in d if x["code"] == "P2S111"]
            check(len(errors) == 1 and errors[0]["range"]["start"] == {"line": 5, "character": 27}
                  and "takes from 1 to 2 positional argument(s) but 3 were given" in errors[0]["message"], "server: %r" % d)
            cli_codes = lint_codes([tmp], cwd=tmp)
            check(cli_codes == [x["code"] for x in d], "tree mode agrees: %r" % cli_codes)
            pos = position_of(text, "return Double.apply")
            pos["character"] += len("return ")
            r = c.request("textDocument/hover", {"textDocument": {"uri": uri_of(use)}, "position": pos})
            value = r["result"]["contents"]["value"]
            for part in ["PyLayer `Double`", "module `pkg.ops`", "def forward(ctx, x, k=2)", "**This call:**",
                         "`x` ← `x`", "`k` ← `5`"]:
                check(part in value, "%r not in hover:\n%s" % (part, value))
            check("src.pkg" not in value, value)
            # forward gains a parameter in the sibling, saved: the index and the check follow
            ops = os.path.join(tmp, "src", "pkg", "ops.py")
            ops_text = open(ops).read().replace("def forward(ctx, x, k=2):", "def forward(ctx, x, k=2, m=1):")
            with open(ops, "w") as f:
                f.write(ops_text)
            open_doc(c, uri_of(ops), ops_text)
            c.notify("textDocument/didSave", {"textDocument": {"uri": uri_of(ops)}})
            d = c.diagnostics(uri_of(use))
            check([x for x in d if x["code"] == "P2S111"] == [], "after forward gained a parameter: %r" % d)
            c.shutdown()
        finally:
            c.kill()
    finally:
        shutil.rmtree(tmp)


@test
def hover_says_when_a_class_is_left_as_written():
    """A class with a contract error gets no builder and its calls stay as written: the hover
    says so rather than promising a builder."""
    text = ("import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass Broken(PyLayer):\n"
            "    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
            "    def backward(ctx, dy):\n        return dy\n\n\nclass Fine(PyLayer):\n"
            "    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
            "    @staticmethod\n    def backward(ctx, dy):\n        return dy\n\n\n"
            "def f(x):\n    return Broken.apply(x) + Fine.apply(x, 2)\n")
    c = server()
    try:
        c.initialize()
        uri = "file:///tmp/p2s-hover-as-written.py"
        d = open_doc(c, uri, text)
        check("P2S103" in [x["code"] for x in d] and "P2S111" in [x["code"] for x in d], "diagnostics: %r" % d)
        hovers = {}
        for name in ("Broken", "Fine"):
            r = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": position_of(text, name + ".apply")})
            hovers[name] = r["result"]["contents"]["value"]
        check("left as written" in hovers["Broken"] and "generated builder constructs" not in hovers["Broken"],
              hovers["Broken"])
        check("generated builder constructs" in hovers["Fine"] and "**This call** is left as written" in hovers["Fine"],
              hovers["Fine"])
        c.shutdown()
    finally:
        c.kill()


# ---------------------------------------------------------------- the server and the CLI agree

BROKEN_BASE = ("import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass Broken(PyLayer):\n"
               "    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
               "    def backward(ctx, dy):\n        return dy\n")


def pylayer_module(forward_params):
    """A module defining a correct PyLayer T whose forward takes forward_params after ctx."""
    return ("import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass T(PyLayer):\n"
            "    @staticmethod\n    def forward(ctx, %s):\n        return x\n\n"
            "    @staticmethod\n    def backward(ctx, dy):\n        return dy\n" % forward_params)


def write_tree(root, files):
    """Writes {relative path: text} below root."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def document_text(path):
    """The text of path as a document can hold it, or None (not UTF-8, or a NUL in it)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else text


def python_files(root):
    """(path, text) of the .py files below root that a document can hold, sorted."""
    found = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            text = document_text(os.path.join(top, name)) if name.endswith(".py") else None
            if text is not None:
                found.append((os.path.join(top, name), text))
    return found


def server_equals_lint(root):
    """Opens every .py file below root in a server rooted there and checks that each file's
    published diagnostics equal what `--lint --output-format json ROOT` (tree mode) reports for
    it; the differences, as text, or ""."""
    out = subprocess.run([BIN, "--lint", "--output-format", "json", "."], capture_output=True, cwd=root).stdout
    by_file = {}
    for d in json.loads(out):
        by_file.setdefault(os.path.realpath(os.path.join(root, d["file"])), []).append(d)
    problems = []
    with serving(root) as c:
        for path, text in python_files(root):
            got = lsp_tuples(open_doc(c, uri_of(path), text))
            want = cli_tuples(by_file.pop(os.path.realpath(path), []), text)
            if got != want:
                problems.append("%s:\n  server %r\n  --lint %r" % (os.path.relpath(path, root), got, want))
    for path, items in by_file.items():
        problems.append("%s: only --lint reports %r" % (path, [d["code"] for d in items]))
    return "\n".join(problems)


@contextlib.contextmanager
def temp_tree(prefix, files):
    """A temporary directory holding files ({relative path: text}), removed after."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        write_tree(tmp, files)
        yield tmp
    finally:
        shutil.rmtree(tmp)


@contextlib.contextmanager
def serving(root):
    """A server initialized with the workspace folder root, shut down after."""
    c = server()
    try:
        c.initialize(uri_of(root))
        yield c
        c.shutdown()
    finally:
        c.kill()


def hover_text(c, path, text, needle, skip=0):
    """The hover's Markdown at the needle's first occurrence in path's text, skip characters in."""
    pos = position_of(text, needle)
    pos["character"] += skip
    r = c.request("textDocument/hover", {"textDocument": {"uri": uri_of(path)}, "position": pos})
    return r["result"]["contents"]["value"]


@test
def a_subclass_of_a_broken_class_of_another_module_is_left_as_written_in_the_server_too():
    """Regression (issue 48): `class Child(Broken)`, Broken another module's PyLayer with a
    contract error: the server reports P2S301 on Child as `--lint` does (for the file alone and
    for the tree), and the hover on Child.apply says it is left as written."""
    b = ("import paddle\nfrom pkg.a import Broken\n\n\nclass Child(Broken):\n    pass\n\n\n"
         "def f(x):\n    return Child.apply(x)\n")
    with temp_tree("p2s-aswritten-", {"pkg/__init__.py": "", "pkg/a.py": BROKEN_BASE, "pkg/b.py": b}) as tmp:
        for target in ("pkg/b.py", "pkg"):
            out = subprocess.run([BIN, "--lint", "--output-format", "json", target], capture_output=True, cwd=tmp).stdout
            codes = [x["code"] for x in json.loads(out) if x["file"].endswith("b.py")]
            check(codes == ["P2S301"], "--lint %s: %r" % (target, codes))
        use = os.path.join(tmp, "pkg", "b.py")
        with serving(tmp) as c:
            d = open_doc(c, uri_of(use), b)
            check([(x["code"], x["range"]["start"]) for x in d] == [("P2S301", {"line": 4, "character": 6})],
                  "server: %r" % d)
            value = hover_text(c, use, b, "Child.apply")
            check("PyLayer `Child`" in value and "left as written" in value, value)
            # Broken fixed in its module and saved (its exports and signatures unchanged): the
            # index follows, and Child is transpiled again, as by --lint
            a = os.path.join(tmp, "pkg", "a.py")
            fixed = BROKEN_BASE.replace("    def backward", "    @staticmethod\n    def backward")
            with open(a, "w") as f:
                f.write(fixed)
            open_doc(c, uri_of(a), fixed)
            c.notify("textDocument/didSave", {"textDocument": {"uri": uri_of(a)}})
            d = c.diagnostics(uri_of(use))
            check(d == [], "after the fix: %r" % d)


@test
def hover_on_an_imported_class_names_that_class():
    """Regression (issue 48): two modules define a PyLayer T; the hover on `pkg.d.T.apply` is
    pkg.d's T (matched by qualified name, not by its last name), and a re-export's is the class
    it names."""
    e = ("import paddle\nimport pkg.c\nimport pkg.d\nfrom pkg.again import T\n\n\n"
         "def g(x):\n    return pkg.c.T.apply(x) + pkg.d.T.apply(x) + T.apply(x)\n")
    files = {"pkg/__init__.py": "", "pkg/c.py": pylayer_module("x"), "pkg/d.py": pylayer_module("x, scale_from_d=1"),
             "pkg/again.py": "from pkg.d import T\n", "pkg/e.py": e}
    with temp_tree("p2s-qualname-", files) as tmp, serving(tmp) as c:
        use = os.path.join(tmp, "pkg", "e.py")
        open_doc(c, uri_of(use), e)
        for needle, skip, module, forward in (("pkg.c.T.apply", 6, "pkg.c", "def forward(ctx, x)\n"),
                                              ("pkg.d.T.apply", 6, "pkg.d", "def forward(ctx, x, scale_from_d=1)"),
                                              ("+ T.apply", 2, "pkg.d", "def forward(ctx, x, scale_from_d=1)")):
            value = hover_text(c, use, e, needle, skip)
            check("PyLayer `T`" in value and "module `%s`" % module in value and forward in value,
                  "%s: %s" % (needle, value))


GENERATED_WORKSPACE = {
    # a broken class, re-exported by its package; subclasses of it and of the re-export in
    # another package, one subclass re-exported again; calls of each, and of a fine class
    "alpha/__init__.py": "from .base import Broken\nfrom .fine import T\n",
    "alpha/base.py": BROKEN_BASE,
    "alpha/fine.py": pylayer_module("x, k=2"),
    "beta/__init__.py": "",
    "beta/kids.py": ("import paddle\nimport alpha.base\nfrom alpha import Broken, T\n\n\n"
                     "class Kid(Broken):\n    pass\n\n\nclass Other(alpha.base.Broken):\n    pass\n\n\n"
                     "def f(x, layer):\n    return Kid.apply(x) + Other.apply(x) + T.apply(x, 1, 2) + layer.apply(x)\n"),
    "beta/more.py": "from beta.kids import Kid as Grandkid\n",
    "gamma/__init__.py": "",
    "gamma/use.py": ("import paddle\nfrom beta.more import Grandkid\nfrom alpha.fine import T\n\n\n"
                     "class Deeper(Grandkid):\n    pass\n\n\ndef g(x, other):\n"
                     "    return Deeper.apply(x) + Grandkid.apply(x) + T.apply(x, k=3) + other.apply(x)\n"),
    "gamma/same_name.py": pylayer_module("x"),
    "script.py": ("import paddle\nfrom gamma.same_name import T\nimport alpha.fine\n\n\n"
                  "def h(x):\n    return T.apply(x, 1) + alpha.fine.T.apply(x, 1)\n"),
}


@test
def the_servers_diagnostics_are_lints_file_for_file():
    """Parity (issue 48): for every tree fixture (tests/e2e/packages, the siblings fixture), the
    golden inputs as one flat workspace, and a generated workspace of several packages (classes
    left as written across modules and re-exports, classes sharing a name), the diagnostics the
    server publishes for each file equal what `--lint` reports for it in tree mode."""
    with temp_tree("p2s-parity-", {}) as tmp:
        roots = []
        for name, src in (("e2e-packages", os.path.join(HERE, "..", "e2e", "packages")),
                          ("siblings", os.path.join(HERE, "fixtures", "siblings"))):
            shutil.copytree(src, os.path.join(tmp, name), ignore=shutil.ignore_patterns("__pycache__"))
            roots.append(os.path.join(tmp, name))
        golden = os.path.join(tmp, "golden")
        os.makedirs(golden)
        for case in sorted(os.listdir(os.path.join(HERE, "..", "golden"))):
            case_dir = os.path.join(HERE, "..", "golden", case)
            source = os.path.join(case_dir, "input.py")
            # a case with options of its own, or one no document can hold (NUL, not UTF-8), is left out
            if not os.path.exists(os.path.join(case_dir, "args")) and os.path.isfile(source) and \
                    document_text(source) is not None:
                shutil.copy(source, os.path.join(golden, case + ".py"))
        roots.append(golden)
        generated = os.path.join(tmp, "generated")
        write_tree(generated, GENERATED_WORKSPACE)
        roots.append(generated)
        problems = [p for p in (server_equals_lint(root) for root in roots) if p]
        check(not problems, "\n".join(problems))
        # the generated workspace does exercise leaving as written across modules
        out = subprocess.run([BIN, "--lint", "--output-format", "json", "."], capture_output=True, cwd=generated).stdout
        left = sorted((os.path.basename(d["file"]), d["line"]) for d in json.loads(out) if d["code"] == "P2S301")
        check(left == [("base.py", 5), ("kids.py", 6), ("kids.py", 10), ("use.py", 6)], "P2S301 at %r" % left)


@test
def the_server_indexes_exactly_the_files_tree_mode_walks():
    """One walk policy: a symlinked module is read and a configured `exclude`, a .gitignore'd
    file, __pycache__ and a symlinked directory are skipped, by the server as by tree mode."""
    tmp = tempfile.mkdtemp(prefix="p2s-walk-")
    try:
        pkg = os.path.join(tmp, "pkg")
        os.makedirs(os.path.join(pkg, "__pycache__"))
        os.makedirs(os.path.join(tmp, "elsewhere"))
        with open(os.path.join(tmp, "pyproject.toml"), "w") as f:
            f.write('[tool.pylayer2static]\nexclude = ["pkg/generated.py"]\n')
        with open(os.path.join(tmp, ".gitignore"), "w") as f:
            f.write("scratch.py\n")
        layer = ("import paddle\nfrom paddle.autograd import PyLayer\n\n\nclass %s(PyLayer):\n"
                 "    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
                 "    @staticmethod\n    def backward(ctx, dy):\n        return dy\n")
        for name, cls in (("elsewhere/linked_target.py", "Linked"), ("pkg/generated.py", "Generated"),
                          ("pkg/scratch.py", "Scratch"), ("pkg/__pycache__/cached.py", "Cached")):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(layer % cls)
        open(os.path.join(pkg, "__init__.py"), "w").close()
        os.symlink(os.path.join(tmp, "elsewhere", "linked_target.py"), os.path.join(pkg, "linked.py"))
        os.symlink(os.path.join(tmp, "elsewhere"), os.path.join(pkg, "linked_dir"))
        use = os.path.join(pkg, "use.py")
        text = ("import paddle\nfrom .linked import Linked\nfrom .generated import Generated\n"
                "from .scratch import Scratch\n\n\ndef f(x):\n"
                "    return Linked.apply(x) + Generated.apply(x) + Scratch.apply(x)\n")
        with open(use, "w") as f:
            f.write(text)
        out = os.path.join(tempfile.mkdtemp(prefix="p2s-walk-out-"), "out")
        depfile = out + ".d"
        subprocess.run([BIN, "-q", tmp, "-o", out, "--depfile", depfile], check=True, cwd=tmp)
        walked = sorted(line.split(": ")[1].split(" ")[0].strip()[len(tmp) + 1:] for line in open(depfile))
        check(walked == ["elsewhere/linked_target.py", "pkg/__init__.py", "pkg/linked.py", "pkg/use.py"],
              "tree mode walked %r" % walked)
        shutil.rmtree(os.path.dirname(out))
        c = server()
        try:
            c.initialize(uri_of(tmp))
            d = open_doc(c, uri_of(use), text)
            log = c.wait_notification("window/logMessage", lambda m: "indexed" in m["params"]["message"])
            check(("indexed %d modules" % len(walked)) in log["params"]["message"], log["params"]["message"])
            cli = subprocess.run([BIN, "--lint", "--output-format", "json", tmp], capture_output=True, cwd=tmp).stdout
            cli_notes = [(x["line"], x["col"]) for x in json.loads(cli) if x["file"].endswith("use.py") and x["code"] == "P2S300"]
            notes = [(x["range"]["start"]["line"] + 1, x["range"]["start"]["character"] + 1) for x in d if x["code"] == "P2S300"]
            check(len(notes) == 2 and notes == cli_notes, "server %r, tree mode %r" % (notes, cli_notes))
            c.shutdown()
        finally:
            c.kill()
    finally:
        shutil.rmtree(tmp)


@test
def the_workspace_takes_its_configuration_from_the_clients_settings():
    """The folder's index reads the configuration the documents do: the nearest one, the
    client's `config` instead, or none for `noConfig`, given at initialize or changed later; as
    `--config` and `--no-config` do for tree mode. The nearest one excludes the sibling module
    that defines Double, so Double.apply is routed unresolved (a second P2S300)."""
    tmp = tempfile.mkdtemp(prefix="p2s-wscfg-")
    try:
        text = "import paddle\nfrom paddle.autograd import PyLayer\nfrom .ops import Double\n\n\ndef f(x, other):\n    y = Double.apply(x)\n    return other.apply(y)\n"
        use = write_package(os.path.join(tmp, "pkg"), text)
        with open(os.path.join(tmp, "pyproject.toml"), "w") as f:
            f.write('[tool.pylayer2static]\nexclude = ["pkg/ops.py"]\n')
        other = os.path.join(tmp, "other.toml")
        with open(other, "w") as f:
            f.write("[tool.pylayer2static]\n")

        def notes(d):
            return len([x for x in d if x["code"] == "P2S300"])

        check(lint_codes([tmp], cwd=tmp).count("P2S300") == 2, "tree mode excludes ops.py")
        check(lint_codes(["--config", other, tmp], cwd=tmp).count("P2S300") == 1, "tree mode with --config")
        check(lint_codes(["--no-config", tmp], cwd=tmp).count("P2S300") == 1, "tree mode with --no-config")
        for options, want in ((None, 2), ({"config": other}, 1), ({"pylayer2static": {"noConfig": True}}, 1)):
            c = server()
            try:
                c.initialize(uri_of(tmp), options)
                c.wait_notification("window/logMessage", lambda m: "indexed" in m["params"]["message"])
                d = open_doc(c, uri_of(use), text)
                check(notes(d) == want, "initializationOptions %r: %r" % (options, d))
                if options is None:
                    for settings, after in (({"config": other}, 1), ({"noConfig": True}, 1), ({}, 2)):
                        c.notify("workspace/didChangeConfiguration", {"settings": {"pylayer2static": settings}})
                        c.wait_notification("window/logMessage", lambda m: "indexed" in m["params"]["message"])
                        d = c.diagnostics(uri_of(use))
                        check(notes(d) == after, "didChangeConfiguration %r: %r" % (settings, d))
                c.shutdown()
            finally:
                c.kill()
    finally:
        shutil.rmtree(tmp)


@test
def lsp_valgrind_session():
    """A short session touching every feature; with --wrap valgrind, its exit status says clean."""
    c = server()
    try:
        c.initialize(uri_of(os.path.join(HERE, "fixtures")))
        uri = uri_of(os.path.join(HERE, "fixtures", "model.py"))
        text = fixture_text()
        d = open_doc(c, uri, text)
        pos = position_of(text, "y.numpy()")
        d = change(c, uri, 2, [{"range": {"start": pos, "end": dict(pos, character=pos["character"] + 9)},
                                "text": "y"}])
        for method, params in [
                ("textDocument/hover", {"position": position_of(text, "Tanh.apply")}),
                ("textDocument/codeAction", {"range": d[0]["range"], "context": {"diagnostics": d}}),
                ("textDocument/documentSymbol", {})]:
            params["textDocument"] = {"uri": uri}
            check("result" in c.request(method, params, timeout=60), method)
        r = c.request("workspace/executeCommand", {"command": "pylayer2static.showStaticForm", "arguments": [uri]},
                      timeout=60)
        check("_p2s.apply" in r["result"], "static form")
        c.send_raw(b"Content-Length: 3\r\n\r\n{x}")
        check(c.read_message(60)["error"]["code"] == -32700, "parse error")
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        resp, code = c.shutdown(timeout=60)
        check(code == 0, "exit status %r (99: valgrind found errors or leaks)" % code)
    finally:
        c.kill()


def main():
    global BIN, WRAP
    args = sys.argv[1:]
    if "--wrap" in args:
        i = args.index("--wrap")
        WRAP = shlex.split(args[i + 1])
        del args[i:i + 2]
    only = None
    if "-k" in args:
        i = args.index("-k")
        only = args[i + 1]
        del args[i:i + 2]
    BIN = os.path.abspath(args[0])
    passed = failed = 0
    for fn in TESTS:
        if only and only not in fn.__name__:
            continue
        t0 = time.monotonic()
        try:
            fn()
            passed += 1
            print("lsp: ok   %s (%.2fs)" % (fn.__name__, time.monotonic() - t0))
        except Exception:
            failed += 1
            print("lsp: FAIL %s" % fn.__name__)
            traceback.print_exc(limit=3)
    print("lsp: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
