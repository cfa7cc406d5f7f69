"""What the commands print: results to stdout (say), one-line messages to stderr (warn). A reader
that goes away (`triaudit compare ... | head -1`) ends the output, not the command: the exit code
still says what was found."""

from __future__ import annotations

import os
import sys


def say(text: str) -> None:
    try:
        print(text, flush=True)
    except BrokenPipeError:
        silence_stdout()


def warn(text: str) -> None:
    try:
        print(text, file=sys.stderr, flush=True)
    except BrokenPipeError:
        pass


def silence_stdout() -> None:
    """Points stdout at /dev/null: the interpreter's last flush must not fail on a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
