"""The user's project and its [tool.pylayer2static] table, as the binary finds and reads them.

The import hook (`importhook.py`) needs the project (which modules are the user's), the
configuration file (handed to the binary) and `packages` (the libraries to transpile too) before
the binary runs. They follow the binary's rules, here in Python, since the binary has no option
that prints a file's settings: the project root is src/project.c's (`p2s_project_init`: the
configuration's directory, else the nearest pyproject.toml's), the configuration file
src/config.c's (`p2s_config_discover`: the nearest pyproject.toml holding
`[tool.pylayer2static]`), and the table is read by config.c's parser (`p2s_config_parse`: its
TOML subset, its errors as `file:line:col`), mirrored by `_ConfigReader`. A change to those
rules in src/ is made here too; tests/e2e/test_run.py compares the two on the same files.
Paddle-free, and imports nothing of the runtime.
"""
import os
import re
from typing import List, NoReturn, Optional

__all__ = ["config_file", "configured_packages", "project_root"]

_TABLE = "tool.pylayer2static"


def _nearest_pyproject(start: str, with_table: bool) -> Optional[str]:
    """The nearest readable pyproject.toml at or above `start` (symlinks resolved) and, when
    `with_table`, holding the text `[tool.pylayer2static]`: config.c's `config__nearest`, behind
    the binary's `p2s_config_discover` (`with_table`) and `p2s_config_nearest_pyproject`."""
    d = os.path.realpath(start)
    while True:
        path = os.path.join(d, "pyproject.toml")
        if with_table:
            try:
                with open(path, "rb") as f:
                    if f"[{_TABLE}]".encode() in f.read():
                        return path
            except OSError:
                pass
        elif os.access(path, os.R_OK):
            return path
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def config_file(start: str) -> Optional[str]:
    """The configuration the binary reads for a file in `start`: the nearest pyproject.toml with
    a [tool.pylayer2static] table."""
    return _nearest_pyproject(start, True)


def project_root(start: str) -> str:
    """The project of `start` as the binary's project.c finds it (`p2s_project_init`): the
    directory of the configuration file, else of the nearest pyproject.toml; where the binary
    sees no project (no pyproject.toml above), `start` itself."""
    found = config_file(start) or _nearest_pyproject(start, False)
    return os.path.dirname(found) if found else os.path.realpath(start)


class _ConfigError(Exception):
    pass


class _ConfigReader:
    """`packages` of the [tool.pylayer2static] table, read as the binary reads the file
    (config.c's `p2s_config_parse`: its TOML subset, its way of skipping other tables' values,
    its `file:line:col` errors). Only `packages` is the hook's: an error in its value is raised
    here (the hook cannot tell which libraries to transpile); the binary reads the table up to
    its first error, so the hook reads no further either, and leaves that error to the binary,
    which reports it when it transpiles the first module."""

    _LISTS = ("rules", "src", "select", "ignore", "warn", "exclude")

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text, self.at = path, text, 0

    def _peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else "\0"

    def _error(self, what: str) -> NoReturn:
        before = re.split("\r\n|\r|\n", self.text[: self.at])
        col = len(before[-1]) + 1 - (len(before) == 1 and before[0].startswith("\ufeff"))
        raise _ConfigError(f"{self.path}:{len(before)}:{col}: error: {what}")

    def _skip(self, lines: bool) -> None:
        while True:
            c = self._peek()
            if c in " \t" or (lines and c in "\r\n"):
                self.at += 1
            elif c == "#":
                while self.at < len(self.text) and self.text[self.at] != "\n":
                    self.at += 1
            else:
                return

    def _string(self) -> str:
        quote = self._peek()
        if quote not in "\"'":
            self._error("expected a string")
        self.at += 1
        out = []
        while True:
            c = self._peek()
            if c in "\0\n":
                self._error("unterminated string")
            self.at += 1
            if c == quote:
                return "".join(out)
            if c == "\\" and quote == '"':
                e = self._peek()
                self.at += 1
                if e not in 'nt"\\':
                    self.at -= 1
                    self._error("unsupported escape in string")
                c = {"n": "\n", "t": "\t"}.get(e, e)
            out.append(c)

    def _string_array(self) -> List[str]:
        if self._peek() != "[":
            self._error("expected an array of strings")
        self.at += 1
        out = []
        while True:
            self._skip(True)
            if self._peek() == "]":
                self.at += 1
                return out
            out.append(self._string())
            self._skip(True)
            if self._peek() == ",":
                self.at += 1
            elif self._peek() != "]":
                self._error("expected ',' or ']'")

    def _integer(self) -> None:
        start = self.at
        while self._peek() in "0123456789" and int(self.text[start:self.at] or 0) <= 100000:
            self.at += 1
        if self.at == start or not 1 <= int(self.text[start:self.at]) <= 256:
            self.at = start
            self._error("expected a number of jobs from 1 to 256")

    def _skip_value(self) -> None:
        depth, quote = 0, ""
        while self.at < len(self.text):
            c = self.text[self.at]
            if quote:
                if c == "\\":
                    self.at += 1
                elif c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
            elif c == "\n" and depth <= 0:
                return
            elif c == "#" and depth <= 0:
                self._skip(False)
                continue
            self.at += 1

    def _value(self, key: str, key_at: int, packages: List[str]) -> None:
        if key == "packages":
            try:
                packages.extend(self._string_array())
            except _ConfigError as e:
                raise ImportError(str(e)) from None
        elif key in self._LISTS:
            (self._string_array if self._peek() == "[" else self._string)()
        elif key == "jobs":
            self._integer()
        else:
            self.at = key_at
            self._error("unknown key (expected rules, select, ignore, warn, exclude, jobs, src or packages)")

    def packages(self) -> List[str]:
        packages: List[str] = []
        ours = False
        try:
            while True:
                self._skip(True)
                c = self._peek()
                if c == "\0":
                    return packages
                if c == "[":
                    start = self.at = self.at + 1
                    while self._peek() not in "\0]\n":
                        self.at += 1
                    if self._peek() != "]":
                        self._error("expected ']'")
                    ours = self.text[start:self.at] == _TABLE
                    self.at += 1
                    continue
                key_at = self.at
                while self._peek() not in "\0=\n":
                    self.at += 1
                key = self.text[key_at:self.at].rstrip(" \t")
                if self._peek() != "=":
                    self._error("expected 'key = value'")
                self.at += 1
                self._skip(False)
                if not ours:
                    self._skip_value()
                    continue
                if not key:
                    self.at = key_at
                    self._error("expected a key")
                self._value(key, key_at, packages)
                self._skip(False)
                if self._peek() not in "\0\n\r":
                    self._error("expected the end of the line after the value")
        except _ConfigError:  # the binary's to report: it reads no further either
            return packages


def configured_packages(start: str) -> List[str]:
    """`packages` of the [tool.pylayer2static] table found from `start` (empty without one)."""
    path = config_file(start)
    if path is None:
        return []
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    return _ConfigReader(path, text).packages()
