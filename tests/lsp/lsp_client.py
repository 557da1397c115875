"""A minimal LSP client over pipes (standard library only), for the protocol tests and the
benchmark: frames messages, reads them back with a timeout, keeps notifications aside."""
import json
import os
import select
import subprocess
import time


class Client:
    def __init__(self, argv, cwd=None, stderr=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr if stderr is not None else (None if os.environ.get("LSP_STDERR") else subprocess.DEVNULL), cwd=cwd)
        self.buf = b""
        self.next_id = 0
        self.notes = []          # notifications received and not consumed yet

    # -- sending --
    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request(self, method, params=None, timeout=10):
        self.next_id += 1
        rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.wait_response(rid, timeout)

    # -- receiving --
    def _read_some(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no message from the server")
        ready, _, _ = select.select([self.proc.stdout], [], [], left)
        if not ready:
            raise TimeoutError("no message from the server")
        chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
        if not chunk:
            raise EOFError("the server closed its output")
        self.buf += chunk

    def read_message(self, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                length = None
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    raise ValueError("a message without Content-Length: %r" % head)
                if len(rest) >= length:
                    self.buf = rest[length:]
                    return json.loads(rest[:length])
            self._read_some(deadline)

    def wait_response(self, rid, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read_message(max(0.001, deadline - time.monotonic()))
            if "method" not in msg and msg.get("id") == rid:
                return msg
            self.notes.append(msg)

    def wait_notification(self, method, pred=lambda m: True, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self.notes):
                if m.get("method") == method and pred(m):
                    return self.notes.pop(i)
            self.notes.append(self.read_message(max(0.001, deadline - time.monotonic())))

    def diagnostics(self, uri, version=None, timeout=10):
        def match(m):
            p = m["params"]
            return p["uri"] == uri and (version is None or p.get("version") == version)
        return self.wait_notification("textDocument/publishDiagnostics", match, timeout)["params"]["diagnostics"]

    # -- session helpers --
    def initialize(self, root_uri=None, options=None):
        params = {"processId": os.getpid(), "rootUri": root_uri, "capabilities": {}}
        if options is not None:
            params["initializationOptions"] = options
        resp = self.request("initialize", params)
        self.notify("initialized", {})
        return resp

    def shutdown(self, timeout=10):
        resp = self.request("shutdown")
        self.notify("exit")
        self.proc.stdin.close()
        code = self.proc.wait(timeout)
        return resp, code

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
