"""Puts freshly measured figures into docs/PERFORMANCE.md (`make bench-doc`).

    python3 write_doc.py DOC [--measured TOOL.md MODELS.md] [--twins TWINS.md] [--twins-rows TWINS.md]
        [--instructions INSTR.md] [--construction CONSTRUCTION.md] [--recompute RECOMPUTE.md]

`--measured` replaces everything between the doc's `<!-- measured: begin -->` and
`<!-- measured: end -->` markers with the two measurement files; `--twins` replaces what is
between `<!-- twins: begin -->` and `<!-- twins: end -->` with the twins benchmark's tables
(tests/bench/twins.sh), so that one can be regenerated alone, without the tool's long run;
`--instructions` replaces what is between `<!-- instructions: begin -->` and
`<!-- instructions: end -->` (inside the measured section) with `run.py --instructions-only`'s
table (`make bench-instructions`);
`--twins-rows` puts in only the rows of the models its tables hold (`twins.sh --models NAME`),
replacing those models' rows in the table of the same framework version and recounting the
targets met, with a line saying when and how those rows were measured; `--construction` replaces
what is between `<!-- construction: begin -->` and `<!-- construction: end -->` with the
construction benchmark's tables (tests/bench/construction.sh); `--recompute` what is between
`<!-- recompute: begin -->` and `<!-- recompute: end -->` with the recompute benchmark's tables
(tests/bench/recompute.sh). The prose around the markers stays.
"""
import argparse
import re
from typing import List, Tuple

HEADING = re.compile(r"^### paddlepaddle (\S+) \((.*)\)$")
COUNT = re.compile(r"^\d+ of \d+ targets met\.$")


def replace_section(text: str, name: str, body: str) -> str:
    """`text` with what is between the `name` markers replaced by `body`."""
    begin, end = "<!-- {}: begin -->".format(name), "<!-- {}: end -->".format(name)
    if begin not in text or end not in text:
        raise SystemExit("write_doc.py: no {} ... {} markers in the doc".format(begin, end))
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + body.strip() + "\n" + end + tail


def _tables(text: str) -> List[Tuple[str, List[str]]]:
    """Each framework version's part of a twins text: (version, its lines, heading first)."""
    parts: List[Tuple[str, List[str]]] = []
    for line in text.strip().splitlines():
        match = HEADING.match(line)
        if match:
            parts.append((match.group(1), []))
        if parts:
            parts[-1][1].append(line)
    return parts


def _row_models(lines: List[str]) -> List[str]:
    """The model of each of `lines` ('' for a line that is not a table row; a row with no
    model name is its group's)."""
    models, model = [], ""
    for line in lines:
        cells = line.split("|")
        if not line.startswith("| ") or len(cells) < 3 or cells[1].strip() in ("model", "---"):
            models.append("")
            continue
        model = cells[1].strip() or model
        models.append(model)
    return models


def _met(row: str) -> str:
    return row.split("|")[-2].strip()


def merge_rows(section: str, new: str) -> str:
    """`section` with the rows of the models `new`'s tables hold put in (`--twins-rows`)."""
    fresh_parts = dict(_tables(new))
    missing = sorted(set(fresh_parts) - {version for version, _ in _tables(section)})
    if missing:
        raise SystemExit("write_doc.py: no twins table for paddlepaddle {} in the doc".format(", ".join(missing)))
    out: List[str] = []
    for version, lines in _tables(section):
        fresh = fresh_parts.get(version)
        if fresh is None:
            out += lines + [""]
            continue
        rows = [line for line, model in zip(fresh, _row_models(fresh)) if model]
        names = sorted(set(model for model in _row_models(fresh) if model))
        kept = [line for line, model in zip(lines, _row_models(lines))
                if model not in names and not line.startswith("Rows of ")]
        rows_end = max(i for i, line in enumerate(kept) if line.startswith("|")) + 1
        kept[rows_end:rows_end] = rows
        every = [line for line, model in zip(kept, _row_models(kept)) if model]
        count = "{} of {} targets met.".format(sum(_met(r) == "yes" for r in every), sum(_met(r) != "" for r in every))
        kept = [count if COUNT.match(line) else line for line in kept]
        while kept and not kept[-1]:
            kept.pop()
        how = HEADING.match(fresh[0]).group(2)
        out += kept + ["", "Rows of {} measured apart ({}).".format(", ".join(names), how), ""]
    return "\n".join(out)


def twins_section(text: str) -> str:
    begin, end = "<!-- twins: begin -->", "<!-- twins: end -->"
    return text.split(begin, 1)[1].split(end, 1)[0]


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
    ap.add_argument("--instructions", metavar="INSTRUCTIONS_MD")
    ap.add_argument("--twins-rows", metavar="TWINS_MD")
    ap.add_argument("--construction", metavar="CONSTRUCTION_MD")
    ap.add_argument("--recompute", metavar="RECOMPUTE_MD")
    args = ap.parse_args()
    (text,) = read([args.doc])
    if args.measured:
        tool, models = read(args.measured)
        text = replace_section(text, "measured",
                               tool + "\n## The transpiled programs (construction and training step)\n\n" + models)
    if args.instructions:
        (table,) = read([args.instructions])
        text = replace_section(text, "instructions", table.replace("<!-- instructions: begin -->", "")
                               .replace("<!-- instructions: end -->", ""))
    if args.twins:
        (twins,) = read([args.twins])
        text = replace_section(text, "twins", twins)
    if args.twins_rows:
        (twins,) = read([args.twins_rows])
        text = replace_section(text, "twins", merge_rows(twins_section(text), twins))
    if args.construction:
        (construction,) = read([args.construction])
        text = replace_section(text, "construction", construction)
    if args.recompute:
        (recompute,) = read([args.recompute])
        text = replace_section(text, "recompute", recompute)
    with open(args.doc, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
