"""What a soak found: one Event per finding, each naming the GPU, the time, the case and, for
silent data corruption, the differing tiles. Every kind fails the soak (exit 1); what does not
fail it (a throttle that took power with it, a drift that could not be judged) is a note, not
an event. Standard library only."""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass

SDC = "sdc"  # an output differed, bit for bit, from what it must be
UNCORRECTED = "uncorrected error"  # an uncorrected ECC error, an uncorrectable row, a failed remap
XID = "xid"  # a critical XID event
DRIFT = "drift"  # a rate fell beyond its bound while the power stayed
ERROR = "error"  # the load stopped, a check before it failed, a GPU stalled
KINDS = (SDC, UNCORRECTED, XID, DRIFT, ERROR)


@dataclass(frozen=True)
class Tile:
    tile: int
    row0: int
    rows: int
    col0: int
    cols: int

    def where(self) -> str:
        span = f"rows {self.row0}-{self.row0 + self.rows - 1}"
        if self.cols > 1 or self.col0 > 0:
            span += f", cols {self.col0}-{self.col0 + self.cols - 1}"
        return f"tile {self.tile} ({span})"


@dataclass(frozen=True)
class Event:
    kind: str
    gpu_uuid: str
    gpu_index: str  # nvidia-smi's index, as the soak was started
    gpu_name: str
    time_unix: float
    elapsed_s: float  # since the soak began (restarts included)
    window: int | None
    case: str
    detail: str
    tiles: tuple[Tile, ...] = ()

    @property
    def hour(self) -> float:
        return self.elapsed_s / 3600.0

    @property
    def time_utc(self) -> str:
        return utc(self.time_unix)

    def where(self) -> str:
        return ", ".join(t.where() for t in self.tiles)

    def describe(self) -> str:
        """One line: what, which GPU, when, which case and tile, then the detail."""
        when = f"{self.time_utc} (hour {self.hour:.2f}" + (
            f", window {self.window})" if self.window is not None else ")"
        )
        head = f"{self.kind.upper()} on GPU {self.gpu_index or '?'} ({self.gpu_uuid or 'unknown uuid'}) at {when}"
        parts = [head, self.case] if self.case else [head]
        if self.tiles:
            parts.append(self.where())
        return ": ".join(parts) + (f": {self.detail}" if self.detail else "")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["time_utc"] = self.time_utc
        d["hour"] = round(self.hour, 4)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Event:
        tiles = tuple(Tile(**t) for t in d.get("tiles", ()))
        return cls(
            str(d["kind"]),
            str(d["gpu_uuid"]),
            str(d.get("gpu_index", "")),
            str(d.get("gpu_name", "")),
            float(d["time_unix"]),
            float(d["elapsed_s"]),
            None if d.get("window") is None else int(d["window"]),
            str(d.get("case", "")),
            str(d.get("detail", "")),
            tiles,
        )


def utc(unix_s: float) -> str:
    """ISO 8601 UTC to the second."""
    return _dt.datetime.fromtimestamp(unix_s, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def ordered(events: list[Event]) -> list[Event]:
    return sorted(events, key=lambda e: (e.time_unix, e.gpu_index, e.kind, e.case))
