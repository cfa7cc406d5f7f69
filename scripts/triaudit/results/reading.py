"""Finding result files and reading them into compact columns, by a pool of processes when they
are many (a fleet, a hundred cards): what comes before the table."""

from __future__ import annotations

import contextlib
import errno
import gc
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from triaudit.core.files import not_a_regular_file
from triaudit.core.io import interrupts
from triaudit.core.io.tell import notice
from triaudit.results.columns import file_columns
from triaudit.results.gbench import LoadError, read_json


def _why_unreadable(p: Path) -> str:
    try:
        os.stat(p)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symbolic link loop"
        if e.errno == errno.ENOENT and p.is_symlink():
            return f"a dangling symbolic link (to {os.readlink(p)})"
        return e.strerror or str(e)
    return "not a regular file"


def scan_paths(paths: Iterable[str | Path]) -> tuple[list[Path], list[str]]:
    """(result files, notes on what was skipped). Files as given; folders searched recursively for
    *.json (manifests and hidden folders excluded). Inside a folder, a dangling or looping symbolic
    link is skipped and noted; a path given by name that cannot be read is refused (LoadError)."""
    out: list[Path] = []
    skipped: list[str] = []
    seen: set[Path] = set()

    def add(f: Path) -> None:
        key = f.resolve()
        if key not in seen:  # the same file named twice (a folder and a file in it) is read once
            seen.add(key)
            out.append(f)

    for p in map(Path, paths):
        if p.is_dir():
            try:
                found = sorted(p.rglob("*.json"))
            except OSError as e:
                raise LoadError(f"{p}: cannot be searched: {e.strerror or e}") from e
            for f in found:
                rel = f.relative_to(p)
                if f.name == "manifest.json" or any(part.startswith(".") for part in rel.parts):
                    continue
                if f.is_file():
                    add(f)
                elif f.is_symlink():
                    skipped.append(f"{f}: {_why_unreadable(f)}, skipped")
                    notice(f"warning: {skipped[-1]}")  # on the console too, named
        elif p.is_file():
            add(p)
        elif p.is_symlink():
            raise LoadError(f"{p}: {_why_unreadable(p)}")
        elif not_a_regular_file(p):
            raise LoadError(f"{p}: {not_a_regular_file(p)}, not a result file")
        else:
            raise LoadError(f"{p}: no such file or directory")
    return out, skipped


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; directories searched recursively for *.json (manifests excluded)."""
    return scan_paths(paths)[0]


def _load_one(path: Path) -> tuple[Path, dict, list[str], list[str], dict]:
    """One file -> (path, context, notes, cases, columns): what the table keeps of it, compact (the
    text columns encoded, the numbers in typed arrays) for the trip from a worker process."""
    return (path, *file_columns(read_json(path), path, encoded=True))


# Parsing is CPU-bound Python: past this many files (a fleet, a hundred cards) the files are read
# by one process per core (forked; the columns come back compact). Below it, the start-up is not worth it.
PARALLEL_FILES = 24


class Reading:
    """The files under some paths, read (_load_one) by a process pool when there are many;
    iterated, their results in order, as they come (never all held at once). close() stops what is
    not yet read (after an error elsewhere); iterating to the end closes it too."""

    def __init__(self, files: list[Path], notes: list[str]):
        self.files, self.notes = files, notes
        self._pool = None
        workers = min(os.cpu_count() or 1, 8)
        import multiprocessing

        if len(files) < PARALLEL_FILES or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return
        from concurrent.futures import ProcessPoolExecutor

        # Forked with Ctrl-C held back, and ignoring it from their first instruction: only this
        # process handles an interrupt (core/io/interrupts.py). Every file is handed out now, in
        # small chunks: the first come back at once, and no core idles at the end.
        with interrupts.blocked():
            self._pool = ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context("fork"), initializer=interrupts.ignore_in_worker
            )
            self._results = self._pool.map(_load_one, files, chunksize=max(1, min(4, len(files) // (4 * workers))))

    @classmethod
    def start(cls, paths: Iterable[str | Path]) -> Reading:
        return cls(*scan_paths(paths))

    def __iter__(self) -> Iterator[tuple]:
        if self._pool is None:
            yield from map(_load_one, self.files)
            return
        try:
            yield from self._results
        finally:
            self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off while a report is made, and as it was after. It
    walks the containers made since it last ran, and now and then all of them: a hundred cards'
    million parsed entries and the figures' artists made it run a thousand times, a tenth of the
    report's CPU time (in the reading processes too, which inherit the setting). What the report
    leaves in cycles (figures, mostly, closed at the end) is about ten megabytes at the peak (616
    against 606 MB for 100 cards), freed at the next collection."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
