"""One generated section of a doc, between `<!-- support-matrix NAME begin -->` and
`<!-- support-matrix NAME end -->`: spliced in (or appended), checked against a fresh run, or
written atomically. Shared by tests/dist/table.py, tests/matrix/support_table.py and
tests/onnx/table.py, with the command line they have in common (`arguments`, `finish`)."""
import argparse
import difflib
import json
import os
import re
import sys


def splice(doc_text: str, name: str, content: str) -> str:
    """`doc_text` with the section `name` holding `content` (appended when it has none)."""
    begin, end = f"<!-- support-matrix {name} begin -->", f"<!-- support-matrix {name} end -->"
    block = f"{begin}\n{content}\n{end}\n"
    pattern = re.compile(re.escape(begin) + r"\n.*?\n" + re.escape(end) + r"\n?", re.S)
    if pattern.search(doc_text):
        return pattern.sub(lambda _: block, doc_text, count=1)
    if doc_text and not doc_text.endswith("\n"):
        doc_text += "\n"
    return doc_text + ("\n" if doc_text else "") + block


def update(doc: str, name: str, content: str, check: bool, tool: str, regenerate: str) -> int:
    """Check (exit status 1 and a diff when stale) or write the section; `tool` prefixes the
    messages, `regenerate` says how to refresh a stale one."""
    old = ""
    if os.path.exists(doc):
        with open(doc, encoding="utf-8") as f:
            old = f.read()
    new = splice(old, name, content)
    rel = os.path.relpath(doc, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if check:
        if new == old:
            print(f"{tool}: {rel} is up to date ({name})")
            return 0
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), doc, "fresh run"))
        print(f"{tool}: {rel} is stale ({name}); regenerate with {regenerate}", file=sys.stderr)
        return 1
    if new != old:
        tmp = doc + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(tmp, doc)
    print(f"{tool}: wrote the {name} table of {rel}")
    return 0


def arguments(description: str, doc: str) -> argparse.ArgumentParser:
    """A table script's command line: one of --write, --check, --print; --doc."""
    parser = argparse.ArgumentParser(description=description)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true")
    group.add_argument("--check", action="store_true")
    group.add_argument("--print", action="store_true")
    parser.add_argument("--doc", default=doc)
    return parser


def finish(args: argparse.Namespace, name: str, content: str, tool: str, regenerate: str) -> int:
    """Print the section (--print), or check or write it (`update`)."""
    if args.print:
        print(content)
        return 0
    return update(args.doc, name, content, args.check, tool, regenerate)


def summaries_main(argv, description: str, doc: str, name: str, render, tool: str, regenerate: str) -> int:
    """The main of a table rendered from the summary.json files a suite's runs write."""
    parser = arguments(description, doc)
    parser.add_argument("summaries", nargs="+")
    args = parser.parse_args(argv)
    summaries = []
    for path in args.summaries:
        with open(path, encoding="utf-8") as f:
            summaries.append(json.load(f))
    return finish(args, name, render(summaries), tool, regenerate)
