"""What each command reads and writes, declared once: the layer enforces it (checks.py), README and
docs/cli.md render it (scripts/docs_gen.py), the tests assert it (tests/test_io_table.py).

A command module declares `IO = Row(...)`; a command with subcommands (`floors derive`) declares
`IO = {"derive": Row(...)}`. Each path option is a PathOption naming the argparse dest and its role.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The roles a path option can have.
INPUT = "input"  # read only: a regular file or folder, never written
OUTPUT_FOLDER = "output folder"  # replaced whole, only files this command wrote are removed
OUTPUT_FILE = "output file"  # replaced whole, only when this command wrote it (or --force)
APPEND = "append"  # appended to (GitHub's step summary), never a file inside an input
RESULTS = "results root"  # a folder that receives a new run folder, never an earlier one

# What an input must be.
FILE, FOLDER, ANY = "file", "folder", "file or folder"


@dataclass(frozen=True)
class PathOption:
    dest: str  # the argparse dest (a list for nargs="+"/"*"/append)
    flag: str  # as the user writes it: "--out", or the positional's name
    role: str
    kind: str = ANY  # for inputs: FILE, FOLDER or ANY
    nonempty: bool = False  # an input file must hold something (an empty floors file is a mistake)
    special: tuple[str, ...] = ()  # values that are not paths (`soak --resume` alone: "auto")
    must_exist: bool = True  # False: the command itself says what a missing one means
    # Whether the option is read at all for these arguments (report's --results: only without paths).
    used: Callable[[Any], bool] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Row:
    command: str  # "report", "floors derive"
    paths: tuple[PathOption, ...]
    writes: str  # what it writes (README's table, Markdown)
    refuses: str  # what it refuses, or never touches
    codes: tuple[int, ...]  # the exit codes it can end with
    # The names it writes into its output folder (a pre-existing user file of each is kept).
    files: tuple[str, ...] = ()

    def options(self, role: str) -> tuple[PathOption, ...]:
        return tuple(p for p in self.paths if p.role == role)


# The executables are not Python commands; their row is README's last, held by their own tests
# (tests/cpu/test_result_file.cpp, scripts/tests/test_io_findings.py).
EXECUTABLE = Row(
    command="an executable",
    paths=(),
    writes="`--benchmark_out=FILE`: each case appended to `FILE.partial` and flushed as it finishes, renamed "
    "when whole",
    refuses="an existing `FILE`, unless `--force`; a `FILE` whose folder cannot be written (exit 2, nothing "
    "run); `--benchmark_repetitions` below 1",
    codes=(0, 1, 2, 77),
)
