"""Silent data corruption from the soak's hash streams, bit for bit, three ways:

1. each repetition against the first: every output is hashed on the device against its process's
   first output (or the host reference of a triad or copy); a differing operation is in the
   window's record with its tiles, and is an event here;
2. against the GPU's golden output: the first output of its first process (the soak's first
   minutes, checked against the FP64 reference). After a restart (a resumed soak) the new
   process's first output must equal it, tile for tile;
3. across every GPU of the same model running the same case: their golden outputs must be the
   same bits. Per tile, the hash that more than half of them hold is the model's; a GPU that
   differs from it is named with the tiles, and a tile where no hash has a majority (two GPUs that
   disagree) names each of them.

A corruption is one event however many of these see it: a window's differing GEMM is judged
against its process's first output, and that first output once against the golden one and the
model's. Each event names the GPU, the time, the case and the differing tiles; a GEMM's event
says whether the other GPUs of the model computed the tile as expected (the tile re-run on a
second GPU) and what the FP64 reference said of the kept tile. Standard library only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from triaudit.soak.events import ERROR, SDC, Event, Tile, utc
from triaudit.soak.hashlog import Deviation, Reference, Window

TILES_NAMED = 8  # differing tiles named per event, as the device names per operation
OPERATIONS = {
    "gemm": "GEMMs",
    "triad": "triads",
    "h2d": "host-to-device copies",
    "d2h": "device-to-host copies checked",
    "p2p": "peer round trips",
}


@dataclass
class GpuHashes:
    """One GPU's hash stream over the whole soak: every process's reference and every window."""

    uuid: str
    index: str
    name: str
    references: list[Reference] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)

    @property
    def golden(self) -> Reference | None:
        return min(self.references, key=lambda r: r.time_unix) if self.references else None

    def reference_for(self, window: int) -> Reference | None:
        """The reference of the process that ran `window`: the last to start at or before it."""
        before = [r for r in self.references if r.first_window <= window]
        return max(before, key=lambda r: (r.first_window, r.time_unix)) if before else self.golden


@dataclass(frozen=True)
class ModelVote:
    """Per tile, the golden hash more than half the GPUs of a model hold (None: no majority)."""

    gpus: int
    majority: tuple[int | None, ...]
    holders: tuple[Counter, ...]  # per tile: hash -> how many GPUs hold it


def model_votes(gpus: list[GpuHashes]) -> dict[tuple, ModelVote]:
    """(GPU model, case, shape) -> the vote of its GPUs' golden outputs, for models with 2 or more."""
    groups: dict[tuple, list[Reference]] = {}
    for g in gpus:
        if g.golden is not None:
            groups.setdefault((g.name, *g.golden.shape), []).append(g.golden)
    votes = {}
    for key, refs in groups.items():
        if len(refs) < 2:
            continue
        holders = tuple(Counter(r.tiles[t] for r in refs) for t in range(len(refs[0].tiles)))
        majority = tuple(next((h for h, n in c.items() if 2 * n > len(refs)), None) for c in holders)
        votes[key] = ModelVote(len(refs), majority, holders)
    return votes


def _tiles(ref: Reference, tiles: list[int]) -> tuple[Tile, ...]:
    return tuple(Tile(t, *ref.tile_place(t)) for t in tiles[:TILES_NAMED])


def _event(g: GpuHashes, start_unix: float, time_unix: float, window, case, detail, tiles=()) -> Event:
    return Event(SDC, g.uuid, g.index, g.name, time_unix, time_unix - start_unix, window, case, detail, tiles)


def _reference_events(g: GpuHashes, vote: ModelVote | None, start_unix: float) -> list[Event]:
    golden = g.golden
    if golden is None:
        return []
    out: list[Event] = []
    seen: dict[tuple, int] = {}  # the same wrong tiles again at a restart: one event, counted
    again: Counter = Counter()
    n = len(golden.tiles)
    for ref in sorted(g.references, key=lambda r: r.time_unix):
        if ref.shape != golden.shape:
            continue  # another case (a soak resumed with other options): nothing to compare
        is_golden = ref is golden
        wrong, tied = [], []
        for t in range(n):
            model = vote.majority[t] if vote else None
            if model is not None:
                if ref.tiles[t] != model:
                    wrong.append(t)
            elif vote is not None and is_golden:
                tied.append(t)  # the model's GPUs disagree here with no majority
            elif not is_golden and ref.tiles[t] != golden.tiles[t]:
                wrong.append(t)
        if wrong:
            key = tuple((t, ref.tiles[t]) for t in wrong)
            if key in seen:
                again[seen[key]] += 1
                continue
            if is_golden:
                agree = vote.gpus - 1 if vote else 0
                what = (
                    f"its first output differs in {len(wrong)} of {n} tiles from the output the other "
                    f"{agree} GPU(s) of the model agree on (a majority of {vote.gpus if vote else 1})"
                )
            elif vote is not None and all(vote.majority[t] is not None for t in wrong):
                what = f"after a restart its first output differs in {len(wrong)} of {n} tiles from the model's"
            else:
                what = (
                    f"after a restart its first output differs in {len(wrong)} of {n} tiles from its golden "
                    f"output of {utc(golden.time_unix)}"
                )
            seen[key] = len(out)
            detail = what + (f"; FP64 check of this process: {ref.fp64_check}" if ref.fp64_check else "")
            out.append(_event(g, start_unix, ref.time_unix, ref.first_window, ref.case, detail, _tiles(ref, wrong)))
        if tied:
            counts = "; ".join(
                f"tile {t}: " + ", ".join(f"{h:016x} on {k}" for h, k in vote.holders[t].most_common())
                for t in tied[:3]
            )
            detail = (
                f"the {vote.gpus} GPUs of the model disagree with no majority in {len(tied)} of {n} tiles "
                f"({counts}); each is named: judge them against the FP64 check ({ref.fp64_check or 'none said'})"
            )
            out.append(_event(g, start_unix, ref.time_unix, ref.first_window, ref.case, detail, _tiles(ref, tied)))
    for i, k in again.items():
        out[i] = replace(out[i], detail=out[i].detail + f"; the same tiles again after {k} restart(s)")
    return out


def _confirmation(vote: ModelVote | None, ref: Reference | None, d: Deviation) -> str:
    """Whether the tile, as the other GPUs of the model computed it, is what this GPU expected."""
    if vote is None or ref is None or not d.tiles:
        return ""
    t = d.tiles[0]
    model = vote.majority[t.tile] if t.tile < len(vote.majority) else None
    if model is None:
        return f"the model's {vote.gpus} GPUs hold no majority hash for tile {t.tile}"
    if model == t.expected:
        held = vote.holders[t.tile][model]
        return f"{held} of the model's {vote.gpus} GPUs computed tile {t.tile} as this GPU expected ({model:016x})"
    return (
        f"the model's GPUs computed tile {t.tile} as {model:016x}, not as this GPU's first output ({t.expected:016x})"
    )


def _window_events(g: GpuHashes, vote: ModelVote | None, start_unix: float) -> list[Event]:
    out: list[Event] = []
    stopped: set[str] = set()
    for w in sorted(g.windows, key=lambda x: x.window):
        ref = g.reference_for(w.window)
        for key, load in w.workloads.items():
            if load.deviating > 0:
                tiles: list[Tile] = []
                for d in load.deviations:
                    for t in d.tiles:
                        if len(tiles) < TILES_NAMED and all(x.tile != t.tile for x in tiles):
                            tiles.append(Tile(t.tile, t.row0, t.rows, t.col0, t.cols))
                first = load.deviations[0] if load.deviations else None
                what = f"{load.deviating} of {load.checked} {OPERATIONS.get(key, key)} in the window differed"
                if key == "gemm":
                    what += " from the first output"
                if first is not None:
                    what += f" (the first: operation {first.item}, {first.differing_tiles} tile(s))"
                    if key == "gemm":
                        said = _confirmation(vote, ref, first)
                        what += f"; {said}" if said else ""
                    if first.diagnosis:
                        what += f"; {first.diagnosis}"
                when = first.time_unix if first is not None else w.end_unix
                out.append(_event(g, start_unix, when, w.window, load.case, what, tuple(tiles)))
            elif key == "gemm" and load.checked > 0 and ref is not None and load.last_hash != ref.combined:
                what = (
                    f"the window's last output hashes to {load.last_hash:016x}, its first output to "
                    f"{ref.combined:016x}, yet the device named no differing tile (the check itself misbehaved)"
                )
                out.append(_event(g, start_unix, w.end_unix, w.window, load.case, what))
        if w.error and w.error not in stopped:
            stopped.add(w.error)
            out.append(
                replace(_event(g, start_unix, w.end_unix, w.window, "", f"the load stopped: {w.error}"), kind=ERROR)
            )
    return out


def find_sdc(gpus: list[GpuHashes], start_unix: float) -> list[Event]:
    """Every corruption the hash streams show, one event each, in time order."""
    votes = model_votes(gpus)
    out: list[Event] = []
    for g in gpus:
        vote = votes.get((g.name, *g.golden.shape)) if g.golden is not None else None
        out += _reference_events(g, vote, start_unix)
        out += _window_events(g, vote, start_unix)
    return sorted(out, key=lambda e: (e.time_unix, e.gpu_index))
