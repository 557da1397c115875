"""Puts freshly measured figures into docs/PERFORMANCE.md (`make bench-doc`).

    python3 write_doc.py TOOL.md MODELS.md DOC

Everything between the doc's `<!-- measured: begin -->` and `<!-- measured: end -->` markers
is replaced by the two measurement files; the prose around them stays.
"""
import sys

BEGIN, END = "<!-- measured: begin -->", "<!-- measured: end -->"


def main(tool, models, doc):
    with open(tool) as f:
        measured = f.read()
    with open(models) as f:
        measured += "\n## The transpiled programs (construction and training step)\n\n" + f.read()
    with open(doc) as f:
        text = f.read()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(doc, "w") as f:
        f.write(head + BEGIN + "\n" + measured.strip() + "\n" + END + tail)


if __name__ == "__main__":
    main(*sys.argv[1:4])
