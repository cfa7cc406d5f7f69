"""Reading the hash log triaudit_soak writes beside its result file (<result>.hashes, one JSON
object per line, each fsynced before the next: benchmarks/soak/soak_plan.hpp's records).

Two records: "reference", once per process (the GEMM's first output as tile hashes, checked
against the FP64 reference and run again for determinism before the load), and "window", one per
window (per workload: operations, those checked, the rate, the last output's combined hash, and
in full the first operations whose output differed, with the differing tiles). A line cut off by
a power loss or a reboot can only be the last one: it is left out and said so; any other line
that is not a record is an error naming the file and the line. Standard library only.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.core.errors import TriauditError


class HashLogError(TriauditError):
    """A hash log that cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class TileDifference:
    tile: int
    row0: int
    rows: int
    col0: int
    cols: int
    got: int
    expected: int


@dataclass(frozen=True)
class Deviation:
    """One operation whose output differed from what it must be."""

    item: int  # the operation's number in its process
    time_unix: float  # when the host saw it complete
    differing_tiles: int  # all of them; `tiles` names the first few
    tiles: tuple[TileDifference, ...]
    diagnosis: str  # the FP64 reference's verdict on the kept tiles (GEMM), "" when none


@dataclass(frozen=True)
class WorkloadWindow:
    workload: str  # gemm, triad, h2d, d2h, p2p
    case: str
    items: int
    checked: int
    rate: float  # FLOP/s or bytes/s
    last_hash: int  # the combined hash of the last output checked
    deviating: int
    deviations: tuple[Deviation, ...]


@dataclass(frozen=True)
class Window:
    window: int
    start_unix: float
    end_unix: float
    sm_clock_mhz: float | None
    power_w: float | None
    temperature_c: float | None
    throttled: bool
    clock_reasons: str
    error: str  # the load stopped: why ("" when it ran)
    workloads: dict[str, WorkloadWindow]


@dataclass(frozen=True)
class Reference:
    """A process's first GEMM output, tile by tile."""

    gpu_uuid: str
    gpu_name: str
    case: str
    time_unix: float
    first_window: int
    rows: int
    cols: int
    tile_rows: int
    tile_cols: int
    fp64_check: str
    tiles: tuple[int, ...]

    @property
    def combined(self) -> int:
        h = 0
        for t in self.tiles:
            h ^= t
        return h

    @property
    def shape(self) -> tuple[str, int, int, int, int]:
        """What two GPUs must share for their hashes to be comparable."""
        return (self.case, self.rows, self.cols, self.tile_rows, self.tile_cols)

    def tile_place(self, tile: int) -> tuple[int, int, int, int]:
        """(first row, rows, first column, columns) of tile `tile` (tiles run down the columns)."""
        tiles_m = -(-self.rows // self.tile_rows)
        r0, c0 = (tile % tiles_m) * self.tile_rows, (tile // tiles_m) * self.tile_cols
        return r0, min(self.tile_rows, self.rows - r0), c0, min(self.tile_cols, self.cols - c0)


@dataclass
class HashLog:
    path: Path
    references: list[Reference] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _hex(v, what: str) -> int:
    if not isinstance(v, str):
        raise ValueError(f"{what} is not a hex string")
    return int(v, 16)


def _num(v) -> float | None:
    """A figure the executable wrote; None for its "unknown" (-1, null)."""
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        return None
    return float(v)


def _deviation(d: dict) -> Deviation:
    tiles = tuple(
        TileDifference(
            int(t["tile"]),
            int(t["row0"]),
            int(t["rows"]),
            int(t["col0"]),
            int(t["cols"]),
            _hex(t["got"], "got"),
            _hex(t["expected"], "expected"),
        )
        for t in d.get("tiles", [])
    )
    return Deviation(
        int(d["item"]), float(d["time_unix"]), int(d["differing_tiles"]), tiles, str(d.get("diagnosis", ""))
    )


def parse_window(r: dict) -> Window:
    loads = {}
    for key, w in r["workloads"].items():
        loads[key] = WorkloadWindow(
            key,
            str(w["case"]),
            int(w["items"]),
            int(w["checked"]),
            float(w["rate"] or 0.0),
            _hex(w["last_hash"], "last_hash"),
            int(w["deviating"]),
            tuple(_deviation(d) for d in w.get("deviations", [])),
        )
    return Window(
        int(r["window"]),
        float(r["start_unix"]),
        float(r["end_unix"]),
        _num(r.get("sm_clock_mean_mhz")),
        _num(r.get("power_mean_w")),
        _num(r.get("temperature_end_c")),
        bool(r.get("throttled", False)),
        str(r.get("clock_reasons", "")),
        str(r.get("error", "")),
        loads,
    )


def parse_reference(r: dict) -> Reference:
    tiles = tuple(int(h, 16) for h in str(r["tile_hashes"]).split())
    ref = Reference(
        str(r["gpu_uuid"]),
        str(r["gpu_name"]),
        str(r["case"]),
        float(r["time_unix"]),
        int(r["first_window"]),
        int(r["rows"]),
        int(r["cols"]),
        int(r["tile_rows"]),
        int(r["tile_cols"]),
        str(r.get("fp64_check", "")),
        tiles,
    )
    tiles_m = -(-ref.rows // ref.tile_rows) if ref.tile_rows else 0
    tiles_n = -(-ref.cols // ref.tile_cols) if ref.tile_cols else 0
    if len(tiles) != tiles_m * tiles_n:
        raise ValueError(f"{len(tiles)} tile hashes for {tiles_m} x {tiles_n} tiles")
    if "combined" in r and _hex(r["combined"], "combined") != ref.combined:
        raise ValueError("its combined hash is not the XOR of its tile hashes")
    return ref


def read_hash_log(path: Path) -> HashLog:
    """Every record of a hash log; HashLogError naming the file and line for one that is not."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise HashLogError(f"{path}: cannot be read: {e.strerror or e}") from None
    log = HashLog(path)
    lines = text.split("\n")
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        last = no == len(lines)  # no newline after it: the writer was stopped mid-line
        try:
            r = json.loads(line)
            if not isinstance(r, dict):
                raise ValueError("not a JSON object")
            kind = r.get("record")
            if kind == "reference":
                log.references.append(parse_reference(r))
            elif kind == "window":
                log.windows.append(parse_window(r))
            else:
                raise ValueError(f"unknown record {kind!r}")
        except (ValueError, KeyError, TypeError) as e:
            if last:
                log.notes.append(f"{path.name}: its last line is cut off (the soak was stopped mid-write): left out")
                continue
            raise HashLogError(f"{path}:{no}: not a hash log record ({e})") from None
    return log
