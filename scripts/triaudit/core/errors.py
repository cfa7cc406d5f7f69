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


# README's exit-code table, as data: docs_gen.py writes it into README, tests/test_io_table.py holds
# each command's codes to it.
EXIT_CODES = (
    (EXIT_OK, "nothing wrong: every case ran (some may be skipped, each with its reason), no regression, no outlier"),
    (
        EXIT_FOUND,
        "something found: a case failed (a CUDA error or a failed verification), a regression, an outlier, a peer "
        "output's error entry, a doctor problem, a gate check failed, a soak's SDC, uncorrected error, XID or drift",
    ),
    (
        EXIT_USAGE,
        "bad input: an option, a file, a folder, an output the command refuses to write, a folder it may not write "
        "into, a full disk; the message names it",
    ),
    (
        EXIT_NOTHING_JUDGED,
        "nothing could be judged: no case in common, too few repetitions or GPUs; a gate check NOT TESTED",
    ),
    (EXIT_NO_DEVICE, 'no usable CUDA device (CTest\'s "skipped"); nothing was measured'),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C, SIGTERM): what was written is whole, the rest not written"),
    (EXIT_CLOSED_PIPE, "the reader of the output went away before the verdict was known"),
)
