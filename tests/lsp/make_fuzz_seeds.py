"""Writes the seed corpus of the fuzz_lsp target (tests/fuzz/corpus/fuzz_lsp): LSP sessions,
malformed framing, wrongly typed parameters. Run it again after changing the sessions."""
import json, os
HERE = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(HERE, "..", "fuzz", "corpus", "fuzz_lsp")
model = open(os.path.join(HERE, "fixtures", "model.py"), encoding="utf-8").read()
def frame(m):
    b = json.dumps(m).encode() if not isinstance(m, bytes) else m
    return b"Content-Length: %d\r\n\r\n" % len(b) + b
def req(i, method, params): return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
def note(method, params): return {"jsonrpc": "2.0", "method": method, "params": params}
U = "file:///fuzz/model.py"
init = [req(1, "initialize", {"capabilities": {}, "rootUri": "file:///"}), note("initialized", {})]
opened = init + [note("textDocument/didOpen", {"textDocument": {"uri": U, "languageId": "python", "version": 1, "text": model}})]
def pos(l, c): return {"line": l, "character": c}
sessions = {
 "basic": opened + [req(2, "textDocument/documentSymbol", {"textDocument": {"uri": U}}),
                    req(3, "shutdown", None), note("exit", None)],
 "edits": opened + [note("textDocument/didChange", {"textDocument": {"uri": U, "version": v},
                    "contentChanges": [{"range": {"start": pos(18, 23), "end": pos(18, 24 + v % 3)}, "text": t}]})
                    for v, t in enumerate(["x", "é", "😀", "\n", "", "y.numpy()"], 2)]
                 + [req(9, "workspace/executeCommand", {"command": "pylayer2static.showStaticForm", "arguments": [U]})],
 "features": opened + [req(2, "textDocument/hover", {"textDocument": {"uri": U}, "position": pos(29, 10)}),
                       req(3, "textDocument/codeAction", {"textDocument": {"uri": U}, "range": {"start": pos(0, 0), "end": pos(40, 0)},
                                                          "context": {"diagnostics": []}}),
                       note("workspace/didChangeConfiguration", {"settings": {"pylayer2static": {"ignore": ["P2S2"], "warn": "P2S1", "select": ["P2S"]}}}),
                       req(4, "textDocument/codeAction", {"textDocument": {"uri": U}, "range": {"start": pos(5, 0), "end": pos(6, 0)},
                                                          "context": {"only": ["quickfix"]}}),
                       note("textDocument/didClose", {"textDocument": {"uri": U}})],
 "nul": init + [note("textDocument/didOpen", {"textDocument": {"uri": U, "version": 1, "text": "a = 1\x00\nb\x00"}}),
                note("textDocument/didChange", {"textDocument": {"uri": U, "version": 2}, "contentChanges": [{"range": {"start": pos(0, 5), "end": pos(0, 6)}, "text": ""}]})],
 "before_init": [req(1, "textDocument/hover", {}), note("textDocument/didOpen", {}), req(2, "initialize", {"capabilities": {}}),
                 req(3, "initialize", {}), req(4, "no/such", []), note("exit", None)],
}
for name, msgs in sessions.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"".join(frame(m) for m in msgs))
raw = {
 "malformed": frame(b"{not json") + frame(b"[]") + frame(b"null") + b"Content-Type: x\r\n\r\n" + b"Content-Length: 99999999999\r\n\r\n" + b"x" * 100,
 "garbage_header": b"x" * 9000 + frame(req(1, "initialize", {})) + b"Content-Length: 5\n\n{}",
 "wrong_types": b"".join(frame(m) for m in init + [note("textDocument/didOpen", {"textDocument": {"uri": U, "text": 5}}),
                 note("textDocument/didChange", {"textDocument": {"uri": U}, "contentChanges": [{"range": {"start": {"line": -1, "character": 1e300}, "end": None}, "text": "q"}, 7]}),
                 req(5, "textDocument/hover", {"textDocument": {"uri": U}, "position": {"line": "x"}}),
                 req(6, "workspace/executeCommand", {"command": "pylayer2static.showStaticForm", "arguments": [{}]}),
                 {"jsonrpc": "2.0", "id": [1], "method": "x"}, {"jsonrpc": "2.0", "id": 3, "result": 1}]),
}
for name, data in raw.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
