"""The soak's checkpoint, so that a soak stopped by a node reboot, a Slurm requeue or Ctrl-C can
resume its series where it stopped.

A soak is made in results/.incoming/soak-<UTC stamp>-<node>/ (a hidden folder: no reader takes it
for results while it runs) and holds `soak.checkpoint` (JSON, replaced atomically: the plan, the
GPUs by UUID, and each segment: one process per GPU, from its first window) and .segments/ (each
process's result file, hash log and console log). What a segment finished is on disk as it
happens: the hash log's window records are fsynced one by one, the result file's cases too. A
resumed soak starts each GPU's next process at the window after the last one its hash logs hold,
so the series goes on without a window twice; a window cut off by the stop is a gap, never a
duplicate. Time spent stopped is not load: the soak runs the windows it still owes.
Standard library only.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.core.files import atomic_write
from triaudit.core.io.checks import read_text
from triaudit.core.names import slug
from triaudit.soak.hashlog import read_hash_log
from triaudit.soak.plan import SoakGpu

CHECKPOINT = "soak.checkpoint"
SEGMENTS = ".segments"
KIND = "triaudit soak checkpoint"
VERSION = 1


class CheckpointError(TriauditError):
    """A checkpoint that cannot be resumed; the message names it and why."""


@dataclass
class Segment:
    number: int
    started_utc: str
    first_window: dict[str, int]  # GPU uuid -> the window its process starts at
    windows: dict[str, int]  # GPU uuid -> how many windows it runs
    exit_codes: dict[str, int | None] = field(default_factory=dict)  # None: running, or stopped by a reboot
    ended_utc: str | None = None


@dataclass
class Checkpoint:
    node: str
    host: str
    started_utc: str
    start_unix: float
    duration_s: float
    window_s: float
    windows: int
    drift_bound_pct: float
    build_dir: str
    extra_args: list[str]
    gpus: list[SoakGpu]
    git_commit: str = ""
    segments: list[Segment] = field(default_factory=list)
    finished: bool = False

    def save(self, folder: Path) -> None:
        d = asdict(self)
        d = {"kind": KIND, "version": VERSION, **d}
        atomic_write(Path(folder) / CHECKPOINT, json.dumps(d, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> Checkpoint:
        path = Path(path)
        if path.is_dir():
            path = path / CHECKPOINT
        try:
            d = json.loads(read_text(path))  # a FIFO there is refused, never opened (core/io)
        except FileNotFoundError:
            raise CheckpointError(f"{path}: no such checkpoint (give a soak's folder or its {CHECKPOINT})") from None
        except (OSError, ValueError) as e:
            raise CheckpointError(f"{path}: not a readable checkpoint ({e})") from None
        if not isinstance(d, dict) or d.get("kind") != KIND:
            raise CheckpointError(f"{path}: not a triaudit soak checkpoint")
        if d.get("version") != VERSION:
            raise CheckpointError(f"{path}: checkpoint version {d.get('version')!r}; this triaudit reads {VERSION}")
        try:
            gpus = [SoakGpu(**g) for g in d["gpus"]]
            segments = [Segment(**s) for s in d.get("segments", [])]
            fields = {k: d[k] for k in cls.__dataclass_fields__ if k not in ("gpus", "segments") and k in d}
            return cls(gpus=gpus, segments=segments, **fields)
        except (KeyError, TypeError) as e:
            raise CheckpointError(f"{path}: a checkpoint without {e}") from None


def segment_paths(folder: Path, gpu: SoakGpu, segment: int) -> tuple[Path, Path, Path]:
    """(result file, hash log, console log) of one GPU's process in one segment."""
    base = Path(folder) / SEGMENTS / f"triaudit_soak.{gpu.tag}.s{segment}"
    json_path = base.with_name(base.name + ".json")
    return json_path, json_path.with_name(json_path.name + ".hashes"), base.with_name(base.name + ".log")


def windows_done(folder: Path, ck: Checkpoint) -> dict[str, set[int]]:
    """GPU uuid -> the windows its hash logs hold a record of (what was finished, durably)."""
    done: dict[str, set[int]] = {g.uuid: set() for g in ck.gpus}
    for seg in ck.segments:
        for g in ck.gpus:
            if g.uuid not in seg.first_window:
                continue
            hashes = segment_paths(folder, g, seg.number)[1]
            if hashes.exists():
                done[g.uuid].update(w.window for w in read_hash_log(hashes).windows)
    return done


def next_segment(ck: Checkpoint, done: dict[str, set[int]]) -> dict[str, tuple[int, int]]:
    """GPU uuid -> (first window, windows) of its next process; GPUs with nothing left are absent.
    A GPU starts after the last window it finished: its series goes on, no window is run twice."""
    plan = {}
    for g in ck.gpus:
        first = max(done.get(g.uuid, set()), default=-1) + 1
        if first < ck.windows:
            plan[g.uuid] = (first, ck.windows - first)
    return plan


def utc_stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def find_unfinished(results: Path, node: str) -> Path | None:
    """The newest unfinished soak of `node` under results/.incoming, or None."""
    incoming = Path(results) / ".incoming"
    found = []
    for path in sorted(incoming.glob(f"soak-*-{slug(node)}*/{CHECKPOINT}")):
        try:
            ck = Checkpoint.load(path)
        except CheckpointError:
            continue
        if not ck.finished and ck.node == node:
            found.append((ck.started_utc, path.parent))
    return max(found)[1] if found else None
