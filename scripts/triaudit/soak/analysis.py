"""A soak's verdict from what its processes left on disk: the hash logs compared (sdc.py), the
result files merged into one per GPU (merge.py) and read as time series (series.py), drift judged
(drift.py). Run at the end of a soak, and again on a resumed one over every segment. Standard
library only."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from triaudit.core.errors import EXIT_FOUND, EXIT_OK
from triaudit.runner.child import last_words
from triaudit.soak import drift as D
from triaudit.soak.checkpoint import Checkpoint, segment_paths
from triaudit.soak.events import DRIFT, ERROR, Event, ordered
from triaudit.soak.hashlog import read_hash_log
from triaudit.soak.merge import Merged, merge
from triaudit.soak.plan import SoakGpu
from triaudit.soak.sdc import GpuHashes, find_sdc
from triaudit.soak.series import JUDGED_FOR_DRIFT, UNITS, WindowFigures, entry_events, figures, points, workload_of


@dataclass
class GpuSoak:
    gpu: SoakGpu
    merged: Merged
    figures: list[WindowFigures]
    events: list[Event] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    windows_done: int = 0


@dataclass
class Analysis:
    gpus: list[GpuSoak]
    notes: list[str] = field(default_factory=list)

    @property
    def events(self) -> list[Event]:
        return ordered([e for g in self.gpus for e in g.events])

    @property
    def exit_code(self) -> int:
        return EXIT_FOUND if self.events else EXIT_OK

    def verdict(self) -> str:
        ev = self.events
        if not ev:
            return "clean: no SDC, no uncorrected error, no XID, no drift beyond its bound"
        kinds: dict[str, int] = {}
        for e in ev:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        return f"{len(ev)} event(s): " + ", ".join(f"{n} {k}" for k, n in kinds.items())


def _same_gpu(a: str, b: str) -> bool:
    """CUDA's UUID and nvidia-smi's name one GPU alike; a shortened one (as CUDA_VISIBLE_DEVICES
    allows) is its prefix, as whole-node runs check it."""
    a, b = a.lower(), b.lower()
    return bool(a and b) and (a.startswith(b) or b.startswith(a))


def _hashes(folder: Path, ck: Checkpoint, g: SoakGpu) -> tuple[GpuHashes, list[str], list[Event]]:
    h = GpuHashes(g.uuid, str(g.index), g.name)
    notes: list[str] = []
    wrong: list[Event] = []
    seen: set[int] = set()
    for seg in ck.segments:
        if g.uuid not in seg.first_window:
            continue
        path = segment_paths(folder, g, seg.number)[1]
        if not path.exists():
            continue
        log = read_hash_log(path)
        notes += log.notes
        for r in log.references:
            if not _same_gpu(r.gpu_uuid, g.uuid):
                t = r.time_unix
                wrong.append(
                    Event(
                        ERROR,
                        g.uuid,
                        str(g.index),
                        g.name,
                        t,
                        t - ck.start_unix,
                        r.first_window,
                        r.case,
                        f"{path.name} was written on {r.gpu_uuid}, not on this GPU: its hashes are not judged",
                    )
                )
                break
            h.references.append(r)
        else:
            for w in log.windows:
                if w.window not in seen:
                    seen.add(w.window)
                    h.windows.append(w)
    return h, notes, wrong


def _drift(g: SoakGpu, figs: list[WindowFigures], merged: Merged, ck: Checkpoint) -> tuple[list[Event], list[str]]:
    events, notes = [], []
    bound = ck.drift_bound_pct / 100.0
    for load in JUDGED_FOR_DRIFT:
        series = points(figs, load)
        if not series:
            continue
        if not D.judgeable(series):
            notes.append(f"GPU {g.index}: {load} drift not judged: {len(series)} window(s), the check needs {D.NEEDED}")
            continue
        d = D.find_drift(series, bound)
        if d is None:
            continue
        scale, unit = UNITS[load]
        case = next((c for c in merged.windows if workload_of(c) == load), load)
        power = "unknown" if d.power_fall is None else f"{round(-d.power_fall * 100, 1) + 0.0:+.1f} %"
        said = (
            f"{load} fell {d.fall * 100:.1f} % (median of {D.SPAN_WINDOWS} windows) from "
            f"{d.baseline_rate / scale:.4g} {unit} at the start; power {power}; at worst {d.worst_fall * 100:.1f} %; "
            f"bound {ck.drift_bound_pct:g} %"
        )
        if d.throttled:
            notes.append(f"GPU {g.index}: {said}: the power fell with it, a power or thermal limit, not a drift")
            continue
        events.append(
            Event(DRIFT, g.uuid, str(g.index), g.name, d.time_unix, d.time_unix - ck.start_unix, d.window, case, said)
        )
    return events, notes


def _process_events(folder: Path, ck: Checkpoint, g: SoakGpu, found: list[Event]) -> list[Event]:
    """A process that ended badly with nothing else to say why: its own last words."""
    out = []
    for seg in ck.segments:
        code = seg.exit_codes.get(g.uuid)
        # 77 here is one GPU that CUDA could not use while others ran (a soak where none could
        # is "no GPU" before it gets here): an error, never a quiet gap.
        if code in (None, EXIT_OK) or (code == EXIT_FOUND and found):
            continue
        log = segment_paths(folder, g, seg.number)[2]
        words = last_words(log) if log.exists() else ""
        first = seg.first_window.get(g.uuid, 0)
        t = ck.start_unix + first * ck.window_s  # when the process took over, on the soak's clock
        detail = f"its process (segment {seg.number}) ended with exit {code}" + (f": {words}" if words else "")
        out.append(Event(ERROR, g.uuid, str(g.index), g.name, t, t - ck.start_unix, first, "", detail))
    return out


def analyse(folder: Path, ck: Checkpoint) -> Analysis:
    folder = Path(folder)
    hashes: list[GpuHashes] = []
    per_gpu: dict[str, tuple[list[str], list[Event]]] = {}
    for g in ck.gpus:
        h, notes, wrong = _hashes(folder, ck, g)
        hashes.append(h)
        per_gpu[g.uuid] = (notes, wrong)
    sdc = find_sdc(hashes, ck.start_unix)
    out = Analysis([])
    for g, h in zip(ck.gpus, hashes):
        segments = [
            (seg.first_window[g.uuid], segment_paths(folder, g, seg.number)[0])
            for seg in ck.segments
            if g.uuid in seg.first_window
        ]
        merged = merge(segments)
        figs = figures(merged.entries)
        notes, wrong = per_gpu[g.uuid]
        ends = {w.window: w.end_unix for w in h.windows}
        from_entries, skip_notes = entry_events(
            merged.entries, (g.uuid, str(g.index), g.name), ck.start_unix, ck.window_s, ends, set(ends)
        )
        drift_events, drift_notes = _drift(g, figs, merged, ck)
        events = [e for e in sdc if e.gpu_uuid == g.uuid] + wrong + from_entries + drift_events
        events += _process_events(folder, ck, g, events)
        done = len(ends)
        gpu_notes = list(notes) + list(merged.notes) + skip_notes + drift_notes
        if done < ck.windows:
            gpu_notes.append(f"GPU {g.index}: {done} of {ck.windows} windows finished")
        out.gpus.append(GpuSoak(g, merged, figs, ordered(events), gpu_notes, done))
    return out
