"""The report's folder: the I/O layer's OutputFolder (core/io/outputs.py) owned by `report`, so that
an interrupted report leaves the previous one whole (or nothing), a reused folder keeps nothing
stale, and nothing the report did not write is touched. Its files are listed in
`.triaudit-report.json` in the folder; a folder without that list owns nothing (a copied report's
files are the user's)."""

from __future__ import annotations

from pathlib import Path

from triaudit.core.io.outputs import OutputFolder, manifest_name

MANIFEST = manifest_name("report")


class ReportFolder(OutputFolder):
    def __init__(self, out: Path, inputs: set[Path]):
        super().__init__(out, "report", "--out", inputs)
