"""What each rank of `pylayer2static run -m paddle.distributed.launch ... train.py` runs: the
launcher starts `python -u THIS_FILE --package NAME... train.py ARGS` (run.py puts it in front of
the training script), and this is the runner, as `python -m pylayer2static_runtime.run` is.

A file, since the launcher runs a training script by its path; alone in its directory, since
Python puts that directory first on sys.path until the runner gives the place to train.py's."""
import sys

from pylayer2static_runtime.run import main

if __name__ == "__main__":
    sys.exit(main())
