"""Writing outputs so that nothing a user had is destroyed and nothing half-written is left.

OutputFolder: a command's folder of outputs (report, history, export). Every file goes first into a
staging folder; commit() puts them in place, with interrupts deferred:
- when the folder is new, or holds nothing but what this command wrote before, the staging folder
  (beside it) becomes the folder by one rename: a reader sees the previous folder or the new one;
- when the user keeps files of their own in it, each file is renamed into place, and the stale
  files of the previous run are removed: only names listed in the folder's own list
  (`.triaudit-<command>.json`), plain names inside it, never a path elsewhere.
A file of a name this command writes that it did not write is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.core.files import append_text, atomic_write
from triaudit.core.io import interrupts
from triaudit.core.io.errors import os_error


def manifest_name(owner: str) -> str:
    return f".triaudit-{owner}.json"


def owned(out: Path, owner: str) -> set[str]:
    """The files this command wrote into `out`, as its list there says: plain names only (no
    folder part, no "..", nothing hidden), so a list can never name a file outside `out`."""
    m = Path(out) / manifest_name(owner)
    try:
        listed = json.loads(m.read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return set()
    if not isinstance(listed, list):
        return set()
    return {n for n in listed if isinstance(n, str) and n and n == os.path.basename(n) and not n.startswith(".")}


class OutputFolder:
    """Collects a command's files aside; commit() puts them in place, discard() forgets them."""

    def __init__(self, out: Path, owner: str, flag: str = "--out", inputs: Iterable[Path] = ()):
        self.out, self.owner, self.flag, self.inputs = Path(out), owner, flag, set(inputs)
        if self.out.exists() and not self.out.is_dir():
            raise TriauditError(f"{flag} {self.out}: exists and is not a folder")
        self.names: list[str] = []
        try:
            self.whole = self._only_ours() and not self.out.is_symlink()
            self.staging = self._staging()
        except OSError as e:  # the folder cannot be made or written: named with its option
            raise TriauditError(f"{flag} {self.out}: {os_error(e, 'cannot be written')}") from None

    def _only_ours(self) -> bool:
        if not self.out.exists():
            return True
        mine = owned(self.out, self.owner) | {manifest_name(self.owner)}
        return all(p.name in mine and p.is_file() for p in self.out.iterdir())

    def _staging(self) -> Path:
        if self.whole:  # beside the folder: it becomes the folder by one rename
            aside = self.out.parent / f".{self.out.name}.triaudit-{os.getpid()}"
            try:
                shutil.rmtree(aside, ignore_errors=True)
                aside.mkdir(parents=True)
                return aside
            except OSError:
                self.whole = False  # the parent cannot be written: file by file, inside the folder
        self.out.mkdir(parents=True, exist_ok=True)
        inside = self.out / f".triaudit-{self.owner}-{os.getpid()}"
        shutil.rmtree(inside, ignore_errors=True)
        inside.mkdir()
        return inside

    def check(self, names: list[str]) -> None:
        """Refuses, before anything is written, a name that is an input or a file this command did not write."""
        mine = owned(self.out, self.owner)
        for n in names:
            target = self.out / n
            if target.resolve() in self.inputs:
                raise TriauditError(f"refusing to write {target}: it is one of the inputs")
            if (target.exists() or target.is_symlink()) and n not in mine:
                raise TriauditError(
                    f"refusing to write {target}: a file no triaudit {self.owner} wrote is there "
                    f"(move it, or choose another {self.flag})"
                )

    def write(self, name: str, data: bytes | str) -> Path:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        (self.staging / name).write_bytes(raw)
        self._add(name)
        return self.out / name

    def path(self, name: str) -> Path:
        """Where another writer (pandas' to_csv) writes a file of this folder, aside."""
        self._add(name)
        return self.staging / name

    def adopt(self) -> list[Path]:
        """The files another writer put straight into the staging folder, taken as this folder's."""
        for p in sorted(self.staging.iterdir()):
            if p.is_file() and not p.name.startswith("."):
                self._add(p.name)
        return [self.out / n for n in self.names]

    def _add(self, name: str) -> None:
        if name not in self.names:
            self.names.append(name)

    def commit(self) -> None:
        self.check(self.names)
        listing = json.dumps({"files": sorted(self.names)}, indent=1) + "\n"
        with interrupts.deferred():
            (self.staging / manifest_name(self.owner)).write_text(listing, encoding="utf-8")
            if self.whole and self._swap():
                return
            old = owned(self.out, self.owner)
            for n in self.names:
                os.replace(self.staging / n, self.out / n)
            for n in sorted(old - set(self.names)):  # what the last run wrote and this one does not
                (self.out / n).unlink(missing_ok=True)
            os.replace(self.staging / manifest_name(self.owner), self.out / manifest_name(self.owner))
            self.discard()

    def _swap(self) -> bool:
        """The staging folder becomes the folder; the previous one (only this command's files) goes."""
        if not self.out.exists():
            try:
                os.rename(self.staging, self.out)
                return True
            except OSError:  # made meanwhile: file by file
                self.out.mkdir(parents=True, exist_ok=True)
                self._move_staging_inside()
                return False
        if not self._only_ours():  # the user put a file there meanwhile
            self._move_staging_inside()
            return False
        gone = self.out.parent / f".{self.out.name}.triaudit-old-{os.getpid()}"
        os.rename(self.out, gone)
        os.rename(self.staging, self.out)
        shutil.rmtree(gone, ignore_errors=True)
        return True

    def _move_staging_inside(self) -> None:
        inside = self.out / f".triaudit-{self.owner}-{os.getpid()}"
        os.rename(self.staging, inside)
        self.staging, self.whole = inside, False

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def replace_file(path: Path, data: bytes | str) -> None:
    """A file replaced whole (temporary name beside it, renamed), the rename not interrupted."""
    with interrupts.deferred():
        atomic_write(path, data)


def append(path: Path, text: str) -> None:
    """Appended in one write (core/files.py append_text)."""
    with interrupts.deferred():
        append_text(path, text)
