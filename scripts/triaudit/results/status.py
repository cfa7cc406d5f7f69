"""A host's status file in a fleet results folder: hosts/<UTC stamp>-<node>.status (JSON).

Written by `triaudit run --all-gpus` when it starts and finalised when it ends, so every node of a
Slurm job is on record even when it measured nothing: "no CUDA device" (exit 77), "bad setup",
"failed", "interrupted", "complete", or still "running" when the scheduler killed it. Named
.status, not .json: `report` and `outliers` read every *.json under a folder as a result file.
Standard library only (it runs on bare GPU nodes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from triaudit.core.names import slug

STATUS_DIR = "hosts"
STATUS_SUFFIX = ".status"


class StatusFile:
    """hosts/<stamp>-<node>.status: created exclusively (never over another run's), then
    replaced atomically as this run goes on (a reader never sees half a file)."""

    def __init__(self, results: Path, record: dict):
        folder = results / STATUS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        base = f"{record['started_utc']}-{slug(record['node'])}"
        k = 1
        while True:
            self.path = folder / (base + (f"-{k}" if k > 1 else "") + STATUS_SUFFIX)
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                k += 1
        self.record = record
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(record, indent=2) + "\n")

    def update(self, **changes) -> None:
        self.record.update(changes)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.record, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)


def read_statuses(folder: Path) -> list[dict]:
    """Every host status file under folder/hosts (what `slurm collect` and the fleet report read)."""
    out = []
    for p in sorted((Path(folder) / STATUS_DIR).glob("*" + STATUS_SUFFIX)):
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            rec = {"state": "unreadable status file", "message": str(exc)}
        if not isinstance(rec, dict):
            rec = {"state": "unreadable status file", "message": "not a JSON object"}
        rec["status_file"] = str(p)
        out.append(rec)
    return out
