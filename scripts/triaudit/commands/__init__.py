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
import warnings

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
    store,
)
from triaudit.commands.console import silence_stdout, warn
from triaudit.core.errors import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED, TriauditError
from triaudit.core.io import checks
from triaudit.core.io.errors import os_error
from triaudit.core.io.rows import Row

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
    store,
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
    table = rows()
    for name, parsers in command_parsers(p, table).items():  # a declared path refuses an empty value by name
        declared = checks.declared_dests(table[name])
        for parser in parsers:
            for action in parser._actions:
                if action.dest in declared and not isinstance(action.type, checks.NonEmpty):
                    action.type = checks.NonEmpty(action.type or str)
    return p


def command_parsers(parser: argparse.ArgumentParser, table: dict, prefix: str = "") -> dict[str, list]:
    """{row name: the command's parser and every parser below it} ("report", "floors derive", and
    "plan" with its questions, which repeat its options)."""
    out: dict[str, list] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                full = f"{prefix} {name}".strip()
                if full in table:
                    out[full] = _subtree(sub)
                else:
                    out.update(command_parsers(sub, table, full))
    return out


def _subtree(parser: argparse.ArgumentParser) -> list:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _subtree(sub)
    return found


def rows() -> dict[str, Row]:
    """What each command reads and writes (core/io/rows.py), by command name: each module's IO."""
    out: dict[str, Row] = {}
    for module in COMMANDS:
        io = module.IO
        for row in io.values() if isinstance(io, dict) else [io]:
            out[row.command] = row
    return out


def command_name(a) -> str:
    subs = ("floors_command", "slurm_command", "store_command")
    return " ".join(x for x in (a.command, *(getattr(a, s, None) for s in subs)) if x)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Runs one command; its TriauditError is said in one line with its exit code, an interrupt
    (SIGINT, or SIGTERM as a batch system sends it) exits 130 without a traceback."""
    try:
        a = build_parser().parse_args(argv)
    except KeyboardInterrupt:  # Ctrl-C before the command started (the parser asks git for --version)
        warn("triaudit: interrupted before anything was read or written")
        return EXIT_INTERRUPTED
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        row = rows().get(command_name(a))
        with warnings.catch_warnings():  # a library's warning (matplotlib's) is not the user's business
            warnings.simplefilter("ignore")
            if row is not None:
                checks.enforce(row, a)  # the I/O layer's rules on every path, before anything is read
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
    except OSError as exc:  # a folder that cannot be written, a full disk: the path, exit 2
        e = os_error(exc)
        warn(f"triaudit {a.command}: {e}")
        return e.exit_code
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
