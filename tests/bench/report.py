"""How a benchmark script of this folder gives its table: printed, or appended to `--out`."""
from typing import List, Optional


def emit(lines: List[str], out: Optional[str]) -> None:
    """The table `lines`: appended to the file `out` (one blank line after it), else printed."""
    text = "\n".join(lines) + "\n"
    if out:
        with open(out, "a") as f:
            f.write(text + "\n")
    else:
        print(text)
