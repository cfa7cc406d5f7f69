"""The report's folder: built aside and moved into place, so that an interrupted report leaves the
previous one whole (or nothing), a reused folder keeps nothing stale, and nothing the report did
not write is touched.

A report's files are listed in `.triaudit-report.json` in its folder. Writing a new report there:
every file goes first into a staging folder beside it (`.triaudit-report-<pid>/`); at the end each
is renamed into place, the files the previous report listed and this one does not write are removed,
and the new list is written last. A file of the same name that no triaudit report wrote is refused,
never overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from triaudit.core.errors import TriauditError

MANIFEST = ".triaudit-report.json"


def _owned(out: Path) -> set[str]:
    """The files the report already in `out` wrote: its manifest's list, or for a report written
    before manifests, the report's files if report.md says it is a triaudit report."""
    m = out / MANIFEST
    if m.is_file():
        try:
            return set(json.loads(m.read_text(encoding="utf-8")).get("files", []))
        except (OSError, ValueError):
            return set()
    md = out / "report.md"
    try:
        if md.is_file() and md.read_text(encoding="utf-8").startswith("# triaudit report"):
            return {p.name for p in out.iterdir() if p.is_file() and p.suffix in (".md", ".html", ".csv", ".png")}
    except OSError:
        pass
    return set()


class ReportFolder:
    """Collects a report's files aside; commit() puts them in place."""

    def __init__(self, out: Path, inputs: set[Path]):
        self.out = Path(out)
        if self.out.exists() and not self.out.is_dir():
            raise TriauditError(f"--out {self.out}: exists and is not a folder (the report is a folder of files)")
        if str(out) == "":
            raise TriauditError("--out is empty: name the report's folder")
        self.inputs = inputs
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TriauditError(f"--out {self.out}: cannot be made: {e.strerror or e}") from e
        self.staging = self.out / f".triaudit-report-{os.getpid()}"
        shutil.rmtree(self.staging, ignore_errors=True)
        self.staging.mkdir()
        self.names: list[str] = []

    def check(self, names: list[str]) -> None:
        """Refuses, before anything is written, a name that is an input or a file no report wrote."""
        owned = _owned(self.out)
        for n in names:
            target = self.out / n
            if target.resolve() in self.inputs:
                raise TriauditError(f"refusing to write {target}: it is one of the inputs")
            if target.exists() and n not in owned:
                raise TriauditError(
                    f"refusing to write {target}: a file no triaudit report wrote is there (choose another --out)"
                )

    def write(self, name: str, data: bytes | str) -> Path:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        (self.staging / name).write_bytes(raw)
        self.names.append(name)
        return self.out / name

    def path(self, name: str) -> Path:
        """Where a file of this report is written by another writer (pandas' to_csv), aside."""
        self.names.append(name)
        return self.staging / name

    def commit(self) -> None:
        old = _owned(self.out)
        for n in self.names:
            os.replace(self.staging / n, self.out / n)
        for n in sorted(old - set(self.names)):  # what the previous report wrote and this one does not
            (self.out / n).unlink(missing_ok=True)
        tmp = self.staging / MANIFEST
        tmp.write_text(json.dumps({"files": sorted(self.names)}, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.out / MANIFEST)
        self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
