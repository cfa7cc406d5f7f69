"""A GPU's soak as one result file in the suite's contract (docs/json.md), from the result files
of its processes (one per segment: the first, then one per resume).

triaudit_soak registers each window as a call of each case, in window order, so the k-th entry
of a case in a segment is window first_window + k (an ok entry also says its window in the
`window` counter, which is checked against it). Windows become repetitions: repetition_index is
the window, `repetitions` how many the case has, so `report`, `compare`, `gate` and `outliers`
read a soak like any run (the median over windows, the spread of the series). A window found in
two segments is taken once, from the first. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.results.case_info import gpu_measured
from triaudit.results.gbench import case_name, read_json


class MergeError(TriauditError):
    pass


@dataclass
class Merged:
    context: dict
    entries: list[dict]
    windows: dict[str, list[int]] = field(default_factory=dict)  # case -> its windows, in order
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"context": self.context, "benchmarks": self.entries}


def segment_entries(data: dict, first_window: int, path: Path) -> list[tuple[int, dict]]:
    """(window, entry) for each entry of one segment's result file."""
    seen: dict[str, int] = {}
    out = []
    for e in data.get("benchmarks", []):
        if not isinstance(e, dict) or e.get("run_type", "iteration") != "iteration":
            continue
        case = case_name(str(e.get("run_name", e.get("name", ""))))
        k = seen.get(case, 0)
        seen[case] = k + 1
        window = first_window + k
        said = e.get("window")
        if isinstance(said, (int, float)) and not isinstance(said, bool) and int(said) != window:
            raise MergeError(
                f"{path}: {case}: entry {k} says window {int(said)}, its place says {window} (not a soak segment?)"
            )
        out.append((window, e))
    return out


def merge(segments: list[tuple[int, Path]]) -> Merged:
    """The entries of every segment (first window, result file), each (case, window) once."""
    context: dict | None = None
    taken: dict[tuple[str, int], dict] = {}
    order: list[tuple[int, int, int, str]] = []
    notes = []
    for s, (first, path) in enumerate(segments):
        if not path.exists():
            notes.append(f"{path.name}: missing (the process wrote no result file)")
            continue
        data = read_json(path)
        if not isinstance(data, dict):
            raise MergeError(f"{path}: not a result file")
        ctx = data.get("context", {})
        if context is None or (not gpu_measured(context) and gpu_measured(ctx)):
            context = dict(ctx)
        for i, (window, e) in enumerate(segment_entries(data, first, path)):
            case = case_name(str(e.get("run_name", e.get("name", ""))))
            if (case, window) in taken:
                notes.append(
                    f"{path.name}: {case} window {window} was already written by an earlier segment: kept once"
                )
                continue
            taken[(case, window)] = e
            order.append((window, s, i, case))
    windows: dict[str, list[int]] = {}
    for window, _, _, case in sorted(order):
        windows.setdefault(case, []).append(window)
    entries = []
    for window, _, _, case in sorted(order):
        e = dict(taken[(case, window)])
        e["repetition_index"] = window
        e["repetitions"] = len(windows[case])
        entries.append(e)
    return Merged(context or {}, entries, windows, notes)
