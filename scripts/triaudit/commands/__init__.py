"""The `triaudit` command line: one module per subcommand, each with add_parser(sub) and
run(args) -> exit code; the parser is built from them, and errors are caught here, once.

Exit codes (core/errors.py): 0 nothing wrong; 1 a regression, an outlier, a failed case or check;
2 bad input (an option, a file, a folder); 3 nothing could be judged; 77 no CUDA device; 130
interrupted (SIGINT/SIGTERM: what was written is whole, the rest not written).

Building the parser imports no third-party package: `triaudit run` and `triaudit doctor` work on
bare GPU machines; each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import signal
import sys

from triaudit.commands import (
    compare,
    doctor,
    export,
    figures,
    floors,
    gate,
    history,
    importing,
    outliers,
    plan,
    report,
    run,
    slurm,
    soak,
)
from triaudit.commands.console import silence_stdout, warn
from triaudit.core.errors import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED, TriauditError

# In the order `triaudit --help` lists them.
COMMANDS = [
    run,
    soak,
    report,
    figures,
    compare,
    history,
    export,
    importing,
    plan,
    doctor,
    outliers,
    gate,
    floors,
    slurm,
]


def build_parser() -> argparse.ArgumentParser:
    from triaudit import __version__
    from triaudit.core.builddir import git_commit
    from triaudit.results.gbench import SCHEMA_VERSION

    p = argparse.ArgumentParser(prog="triaudit", description="GPU benchmark suite: run it, report on its results.")
    p.add_argument(
        "--version",
        action="version",
        version=f"triaudit {__version__} (commit {git_commit()}, JSON schema {SCHEMA_VERSION})",
    )
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Runs one command; its TriauditError is said in one line with its exit code, an interrupt
    (SIGINT, or SIGTERM as a batch system sends it) exits 130 without a traceback."""
    a = build_parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return a.func(a)
    except TriauditError as exc:
        warn(f"triaudit {a.command}: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        warn(f"triaudit {a.command}: interrupted; nothing half-written is left")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # an output not written through console.say: the verdict is not known
        silence_stdout()
        return EXIT_CLOSED_PIPE
    finally:
        signal.signal(signal.SIGTERM, previous)


def entry() -> None:
    """The command line (the `triaudit` command, `python -m triaudit`)."""
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    sys.exit(code)
