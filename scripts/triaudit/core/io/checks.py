"""The rules on paths, checked before a command reads or writes anything (main() calls enforce()
with the command's Row): what is refused is said in one line naming the option and the path, exit 2."""

from __future__ import annotations

import argparse
import errno
import os
from collections.abc import Iterable
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.core.files import kind_of
from triaudit.core.io.rows import ANY, APPEND, FILE, FOLDER, INPUT, OUTPUT_FILE, OUTPUT_FOLDER, RESULTS, Row

MISSING = "cannot be read: no such file or directory"
# A run folder is one holding this file (runner/suite.py writes it).
RUN_MANIFEST = "manifest.json"


class NonEmpty:
    """An argparse type that refuses an empty value by name ("argument --markdown: empty ...")
    instead of letting Path("") become the current folder; main() wraps every declared path option's."""

    def __init__(self, convert=Path):
        self.convert = convert

    def __call__(self, text: str):
        if not str(text).strip():
            raise argparse.ArgumentTypeError("empty: name a file or folder")
        return self.convert(text)

    def __repr__(self) -> str:  # argparse names the type in some messages
        return getattr(self.convert, "__name__", "path")


def what_it_is(path: Path) -> str:
    """ "" for a regular file or a folder; otherwise what it is, in words (missing, a FIFO, a loop)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symbolic link loop"
        if e.errno == errno.ENOENT and os.path.islink(path):
            return f"a dangling symbolic link (to {os.readlink(path)})"
        if e.errno == errno.ENOENT:
            return MISSING
        return f"not readable: {e.strerror or e}"
    return kind_of(mode)


def values(args, dest: str) -> list[Path]:
    v = getattr(args, dest, None)
    if v is None:
        return []
    return [Path(x) for x in (v if isinstance(v, (list, tuple)) else [v])]


def check_input(path: Path, flag: str, kind: str = ANY, nonempty: bool = False, must_exist: bool = True) -> None:
    what = what_it_is(path)
    if what == MISSING and not must_exist:
        return  # the command says what a missing one means (soak --resume: which soak to give)
    if what:
        if not flag.startswith("-"):  # a positional: the path alone names it
            raise TriauditError(
                f"{path}: " + ("no such file or directory" if what == MISSING else f"{what}, not a file or folder")
            )
        raise TriauditError(f"{flag} {path}: {what}" + ("" if what == MISSING else ", not a file or folder"))
    if kind == FILE and path.is_dir():
        raise TriauditError(f"{flag} {path}: a folder; a file is wanted here")
    if kind == FOLDER and not path.is_dir():
        raise TriauditError(f"{flag} {path}: a file; a folder is wanted here")
    if not os.access(path, os.R_OK):
        raise TriauditError(f"{flag} {path}: not readable (permission denied)")
    if nonempty and path.is_file() and path.stat().st_size == 0:
        raise TriauditError(f"{flag} {path}: an empty file")


def _within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def run_folder_at_or_above(folder: Path) -> Path | None:
    """The run folder (one holding manifest.json) that `folder` is or lies inside; None if none."""
    here = Path(os.path.abspath(folder))
    for p in (here, *here.parents):
        if (p / RUN_MANIFEST).is_file():
            return p
    return None


def run_folder_below(folder: Path, depth: int = 3) -> Path | None:
    """A run folder at most `depth` levels below `folder` (results/<card>/<run>/); None if none."""
    for level in range(1, depth + 1):
        for m in sorted(Path(folder).glob("/".join(["*"] * level) + "/" + RUN_MANIFEST)):
            if m.is_file():
                return m.parent
    return None


def _resolved(paths: Iterable[Path]) -> list[Path]:
    return [p.resolve() for p in paths]


def check_output_folder(out: Path, flag: str, inputs: list[Path]) -> None:
    """An output folder: a folder or missing; never an input, inside one or above one; never a run
    folder, inside one or above one (what is written there would be read back as a result)."""
    if out.exists() and not out.is_dir():
        raise TriauditError(f"{flag} {out}: exists and is not a folder")
    run = run_folder_at_or_above(out)
    if run is not None:
        raise TriauditError(
            f"{flag} {out}: inside the run folder {run}; report, compare and history would read what is written "
            "there as a result: choose a folder outside the results"
        )
    below = run_folder_below(out) if out.is_dir() else None
    if below is not None:
        raise TriauditError(
            f"{flag} {out}: holds the run folder {below}; a report of {out} would read what is written there as a "
            "result: choose a folder outside the results"
        )
    here = out.resolve()
    for i in _resolved(inputs):
        if _within(here, i):
            where = "is" if here == i else "inside"
            raise TriauditError(f"{flag} {out}: {where} the input {i}: refusing to write there; choose another folder")
        if _within(i, here):
            raise TriauditError(f"{flag} {out}: holds the input {i}: refusing to write there; choose another folder")


def check_output_file(path: Path, flag: str, inputs: list[Path]) -> None:
    """An output or append target: a regular file or missing, in a folder that exists; never an
    input nor a file inside one, never inside a run folder."""
    what = what_it_is(path)
    if what and what != MISSING:
        raise TriauditError(f"{flag} {path}: {what}, not a file")
    if path.is_dir():
        raise TriauditError(f"{flag} {path}: a folder; a file is wanted here")
    if not path.parent.is_dir():
        raise TriauditError(f"{flag} {path}: no such folder {path.parent}")
    here = path.resolve()
    for i in _resolved(inputs):
        if here == i:
            raise TriauditError(f"{flag} {path}: refusing to write over an input")
        if _within(here, i):
            raise TriauditError(f"{flag} {path}: inside the input {i}: refusing to write over an input or into one")
    run = run_folder_at_or_above(path.parent)
    if run is not None:
        raise TriauditError(f"{flag} {path}: inside the run folder {run}: refusing to write into a run")


def check_results_root(path: Path, flag: str) -> None:
    what = what_it_is(path)
    if what and what != MISSING:
        raise TriauditError(f"{flag} {path}: {what}, not a folder")
    if path.exists() and not path.is_dir():
        raise TriauditError(f"{flag} {path}: is a file, not a folder")


def inputs_of(row: Row, args) -> list[Path]:
    """Every input path the command reads for these arguments."""
    out: list[Path] = []
    for p in row.options(INPUT):
        if p.used is not None and not p.used(args):
            continue
        out += [v for v in values(args, p.dest) if str(v) not in p.special]
    return out


def enforce(row: Row, args) -> None:
    """Every rule of the row, before the command runs."""
    for p in row.options(RESULTS):  # first: a --results that is a file is what the user got wrong
        for v in values(args, p.dest):
            check_results_root(v, p.flag)
    inputs = inputs_of(row, args)
    for p in row.options(INPUT):
        if p.used is not None and not p.used(args):
            continue
        for v in values(args, p.dest):
            if str(v) not in p.special:
                check_input(v, p.flag, p.kind, p.nonempty, p.must_exist)
    for p in row.options(OUTPUT_FOLDER):
        for v in values(args, p.dest):
            check_output_folder(v, p.flag, inputs)
    targets: dict[Path, str] = {}
    for p in row.options(OUTPUT_FILE) + row.options(APPEND):
        for v in values(args, p.dest):
            check_output_file(v, p.flag, inputs)
            key = v.resolve()
            if key in targets:
                raise TriauditError(f"{targets[key]} and {p.flag} name the same file {v}")
            targets[key] = p.flag


def declared_dests(row: Row) -> set[str]:
    return {p.dest for p in row.paths}


__all__ = ["FILE", "FOLDER", "NonEmpty", "enforce"]


class NotARegularFile(ValueError):
    """A path that is there but is no regular file (a FIFO would block, a device never end)."""


def read_text(path: Path) -> str:
    """A regular file's text; NotARegularFile before opening anything else (FileNotFoundError when
    it is missing, as open() says). For inputs a command finds itself (a soak's checkpoint in a
    folder), which no option names for enforce() to check first."""
    what = what_it_is(path)
    if what and what != MISSING:
        raise NotARegularFile(f"{what}, not a file")
    if Path(path).is_dir():
        raise NotARegularFile("a folder, not a file")
    return Path(path).read_text(encoding="utf-8")
