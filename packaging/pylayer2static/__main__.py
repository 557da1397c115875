"""`python -m pylayer2static ARGS...` runs the installed binary with ARGS (same exit code);
`python -m pylayer2static run ...` runs a program in this interpreter with its PyLayers made
static on import (`pylayer2static_runtime.run`)."""
import os
import subprocess
import sys

from pylayer2static import find_binary


def main():
    if sys.argv[1:2] == ["run"]:
        # The runtime's hook finds the binary without importing this package (which imports it):
        # hand it the one found here, as `pylayer2static run` hands itself.
        try:
            os.environ.setdefault("P2S_BIN", find_binary())
        except FileNotFoundError:
            pass  # the hook looks beside this Python and on PATH, and says where it looked
        from pylayer2static_runtime.run import main as run

        return run(sys.argv[2:])
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
