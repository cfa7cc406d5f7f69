"""Writing files so that nothing a user had is destroyed and nothing half-written is left: every
file goes to a temporary name beside its target and is renamed over it when whole; a folder of
outputs is built aside and moved into place (report/output.py); inputs are read only when they are
regular files (a FIFO would block, a device would never end)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def written_aside(path: Path) -> Iterator[BinaryIO]:
    """A binary file to write `path` through: a temporary name in the same folder, synced and
    renamed over `path` when the block ends whole; on any error (Ctrl-C included) it is removed
    and `path` is as it was."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: Path, data: bytes | str) -> None:
    """Writes `data` to `path` through a temporary file in the same folder, renamed when whole (an
    interrupted write leaves the old file, or none, never a part)."""
    with written_aside(path) as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def append_text(path: Path, text: str) -> None:
    """Appends `text` to `path` (made if missing) in one write, as GitHub expects of
    $GITHUB_STEP_SUMMARY (several steps add to one summary); a blank line first when the file
    already holds something, so two summaries do not run together."""
    path = Path(path)
    what = not_a_regular_file(path)
    if what:
        raise OSError(f"{path} is {what}, not a file")
    before = path.stat().st_size if path.exists() else 0
    with open(path, "a", encoding="utf-8") as f:
        f.write(("\n" if before else "") + text)


def inside_a_results_tree(folder: Path) -> Path | None:
    """The run folder (one holding manifest.json) that `folder` is, or lies inside; None if none.
    Outputs written there would be read back as results by report, compare and history."""
    here = Path(folder).resolve()
    for p in (here, *here.parents):
        if (p / "manifest.json").is_file():
            return p
    return None


def holds_a_results_tree(folder: Path, depth: int = 3) -> Path | None:
    """A run folder (one holding manifest.json) at most `depth` levels below `folder`, the way
    results/<card>/<run>/ lies under a results root; None if none. An output written into
    `folder` would be read as a result by a report of it."""
    here = Path(folder)
    for level in range(1, depth + 1):
        for m in sorted(here.glob("/".join(["*"] * level) + "/manifest.json")):
            if m.is_file():
                return m.parent
    return None


def kind_of(mode: int) -> str:
    """ "" for a regular file or a folder's st_mode; otherwise what it is, in words."""
    for test, what in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return what
    return ""


def not_a_regular_file(path: Path) -> str:
    """ "" when `path` is a regular file (or a folder) that can be read as one; otherwise what it is,
    in words: a FIFO, a socket, a device."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""  # the caller's own check says "no such file" in its words
    return kind_of(mode)
