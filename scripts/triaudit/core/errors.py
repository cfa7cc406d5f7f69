"""The one error type of the package and the exit codes every command shares.

A TriauditError says in one line what is wrong with what the user gave (a file, an option, a
folder) and which exit code that is; the command line prints it once, as `triaudit <command>:
<message>`, and exits with its code. The readers, planners and judges raise their own subclasses
(LoadError, PlanError, ...) so a caller of the library can tell them apart.
"""

from __future__ import annotations

EXIT_OK = 0  # nothing wrong
EXIT_FOUND = 1  # a regression, an outlier, a failed check or case
EXIT_USAGE = 2  # bad input: an option, a file, a folder
EXIT_NOTHING_JUDGED = 3  # nothing could be judged (no common case, too few GPUs, not tested)
EXIT_NO_DEVICE = 77  # no usable CUDA device (CTest's "skipped")
EXIT_INTERRUPTED = 130  # SIGINT or SIGTERM: what was written is whole, the rest not written
EXIT_CLOSED_PIPE = 141  # the reader of the output went away before the verdict was known


class TriauditError(ValueError):
    """What a command cannot do, in one line, with its exit code (EXIT_USAGE unless said)."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
