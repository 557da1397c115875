"""Run a program with its PyLayers made static, without a copy tree.

    python -m pylayer2static_runtime.run [--package NAME]... SCRIPT.py [ARGS...]
    python -m pylayer2static_runtime.run [--package NAME]... -m MODULE [ARGS...]

installs the import hook (`importhook.py`) and runs SCRIPT like `python SCRIPT.py` (or MODULE
like `python -m MODULE`): `sys.argv`, `sys.path[0]` and `__main__` as Python sets them, the
script itself transpiled too when it defines or applies a PyLayer. `pylayer2static run ...`
(the binary, with P2S_BIN set to itself) and `python -m pylayer2static run ...` come here.

`-m paddle.distributed.launch [OPTIONS] TRAIN.py [ARGS...]`: the hook lives in this process,
the launcher's, and the ranks are processes the launcher starts (`python -u TRAIN.py ARGS`), so
the runner goes in front of the training script there: each rank runs
`python -u launch_worker/pylayer2static_worker.py --package NAME... TRAIN.py ARGS`, this
runner, in the environment (P2S_BIN, P2S_PACKAGES) the ranks inherit.
"""
import builtins
import os
import runpy
import sys
import types
from typing import List, Optional

from .importhook import PackageRefused, PyLayerImportHook, install_import_hook, refuse_never_transpiled

USAGE = """\
usage: python -m pylayer2static_runtime.run [--package NAME]... SCRIPT.py [ARGS...]
       python -m pylayer2static_runtime.run [--package NAME]... -m MODULE [ARGS...]

Runs SCRIPT (or MODULE) as python does, with every module of the project that defines or
applies a PyLayer transpiled on import (cached in __pycache__). --package NAME transpiles the
installed library NAME too (repeatable; also `packages` in [tool.pylayer2static] and
$P2S_PACKAGES); naming paddle or this tool's own packages is an error (exit 2): they are never
transpiled, and Paddle's own PyLayers are built as static ops by the runtime when called. The
transpiler is $P2S_BIN, the one installed beside this Python or pylayer2static on PATH.
With -m paddle.distributed.launch the ranks run TRAIN.py through this runner too."""

LAUNCH = "paddle.distributed.launch"
# What each rank of a launch runs instead of the training script: this runner, by a file's path
# (the launcher runs a training script as `python -u PATH`).
RANK_ENTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch_worker", "pylayer2static_worker.py")
# Launchers whose training script this runner does not replace (paddle's legacy launcher):
# refused, never run with untranspiled ranks.
UNSUPPORTED_LAUNCHERS = ("paddle.distributed.fleet.launch",)
WORKING_FORMS = """\
Run the launcher with a .py training script, `pylayer2static run [--package NAME]... -m
paddle.distributed.launch [OPTIONS] train.py [ARGS]`, or make the ranks' program the runner:
`python -m paddle.distributed.launch [OPTIONS] $(command -v pylayer2static) run [--package NAME]...
train.py [ARGS]` (with P2S_PYTHON naming the Python that has paddle)."""


class LaunchRefused(Exception):
    """A launch whose ranks would run untranspiled; the message says what to run instead."""


def _ranks_through_the_runner(launch_args: List[str], packages: List[str]) -> List[str]:
    """`launch_args` (paddle.distributed.launch's command line) with the training script
    replaced by RANK_ENTRY, the --package options and the script. The script is found by the
    launcher's own parser (every option before it, its arguments the remainder after it), so
    no option of the launcher is read here."""
    from paddle.distributed.launch.context.args_envs import parse_args

    argv = sys.argv
    sys.argv = [LAUNCH] + launch_args
    try:
        parsed = parse_args()[0]
    finally:
        sys.argv = argv
    script, script_args = parsed.training_script, list(parsed.training_script_args)
    at = len(launch_args) - len(script_args) - 1
    if at < 0 or launch_args[at] != script:
        raise LaunchRefused(f"cannot find the training script {script!r} in the launcher's command line")
    if not script.endswith(".py"):
        if os.path.basename(script) == "pylayer2static" and script_args[:1] == ["run"]:
            return launch_args  # the ranks' program is already the runner
        raise LaunchRefused(f"the launcher runs {script!r} as a program, not a Python script: its ranks "
                            "cannot be made to run transpiled from here")
    options = [arg for name in packages for arg in ("--package", name)]
    return launch_args[:at] + [RANK_ENTRY] + options + [script] + script_args


def _run_script(hook: PyLayerImportHook, path: str) -> None:
    """Execute the file at `path` as `__main__`, as `python path` does."""
    loader = hook.spec_for_main(path)
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __loader__=loader, __spec__=None,
                         __package__=None, __builtins__=builtins)
    if loader is not None:
        code = loader.get_code("__main__")
    else:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def main(argv: Optional[List[str]] = None) -> int:
    """Parse `argv` (default: sys.argv[1:]) and run the program; returns the exit status of a
    usage error, or 0 when the program returns (its own SystemExit passes through)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    packages: List[str] = []
    while argv and argv[0].startswith("-") and argv[0] != "-m":
        opt = argv.pop(0)
        if opt == "--package" and argv:
            packages.append(argv.pop(0))
        elif opt.startswith("--package="):
            packages.append(opt.split("=", 1)[1])
        elif opt in ("-h", "--help"):
            print(USAGE)
            return 0
        elif opt == "--":
            break
        else:
            print(f"pylayer2static run: unknown option {opt}\n{USAGE}", file=sys.stderr)
            return 2
    if not argv or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        return 2
    script = None if argv[0] == "-m" else os.path.abspath(argv[0])
    if script is not None and not os.path.isfile(script):
        print(f"{sys.executable}: can't open file {argv[0]!r}: no such file", file=sys.stderr)
        return 2
    try:  # before the program runs: a package the hook never transpiles is an error, not a no-op
        refuse_never_transpiled(packages, "--package")
        hook = install_import_hook(packages, project=os.getcwd() if script is None else os.path.dirname(script))
    except PackageRefused as refused:  # --package, the configuration's `packages`, $P2S_PACKAGES
        print(f"pylayer2static run: error: {refused}", file=sys.stderr)
        return 2
    if script is None:
        module, args = argv[1], argv[2:]
        try:
            if module in UNSUPPORTED_LAUNCHERS:
                raise LaunchRefused("the legacy launcher's ranks would run untranspiled")
            if module == LAUNCH:
                args = _ranks_through_the_runner(args, packages)
        except LaunchRefused as refused:
            print(f"pylayer2static run: error: -m {module}: {refused}.\n{WORKING_FORMS}", file=sys.stderr)
            return 2
        sys.argv = [module] + args  # run_module puts the module's file in argv[0]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    sys.argv = argv
    # As `python script.py`: the script's directory (symlinks resolved) takes the place `-m`
    # gave the current directory, unless -P/-I left both out.
    if not (getattr(sys.flags, "safe_path", False) or sys.flags.isolated):
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    _run_script(hook, script)
    return 0


if __name__ == "__main__":
    sys.exit(main())
