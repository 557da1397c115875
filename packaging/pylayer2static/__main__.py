"""`python -m pylayer2static ARGS...` runs the installed binary with ARGS (same exit code)."""
import os
import subprocess
import sys

from pylayer2static import find_binary


def main():
    try:
        binary = find_binary()
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 3
    argv = ["pylayer2static", *sys.argv[1:]]
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(binary, argv)  # signals and exit code are the binary's own
    return subprocess.call(argv, executable=binary)


if __name__ == "__main__":
    sys.exit(main())
