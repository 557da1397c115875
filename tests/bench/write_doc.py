"""Puts freshly measured figures into docs/PERFORMANCE.md (`make bench-doc`).

    python3 write_doc.py DOC [--measured TOOL.md MODELS.md] [--twins TWINS.md] [--construction CONSTRUCTION.md]

`--measured` replaces everything between the doc's `<!-- measured: begin -->` and
`<!-- measured: end -->` markers with the two measurement files; `--twins` replaces what is
between `<!-- twins: begin -->` and `<!-- twins: end -->` with the twins benchmark's tables
(tests/bench/twins.sh), and `--construction` what is between `<!-- construction: begin -->` and
`<!-- construction: end -->` with the construction benchmark's (tests/bench/construction.sh),
so that each can be regenerated alone, without the tool's long run.
The prose around the markers stays.
"""
import argparse
from typing import List


def replace_section(text: str, name: str, body: str) -> str:
    """`text` with what is between the `name` markers replaced by `body`."""
    begin, end = "<!-- {}: begin -->".format(name), "<!-- {}: end -->".format(name)
    if begin not in text or end not in text:
        raise SystemExit("write_doc.py: no {} ... {} markers in the doc".format(begin, end))
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + body.strip() + "\n" + end + tail


def read(paths: List[str]) -> List[str]:
    texts = []
    for path in paths:
        with open(path) as f:
            texts.append(f.read())
    return texts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("doc")
    ap.add_argument("--measured", nargs=2, metavar=("TOOL_MD", "MODELS_MD"))
    ap.add_argument("--twins", metavar="TWINS_MD")
    ap.add_argument("--construction", metavar="CONSTRUCTION_MD")
    args = ap.parse_args()
    (text,) = read([args.doc])
    if args.measured:
        tool, models = read(args.measured)
        text = replace_section(text, "measured",
                               tool + "\n## The transpiled programs (construction and training step)\n\n" + models)
    if args.twins:
        (twins,) = read([args.twins])
        text = replace_section(text, "twins", twins)
    if args.construction:
        (construction,) = read([args.construction])
        text = replace_section(text, "construction", construction)
    with open(args.doc, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
