"""What `triaudit run` shows while an executable runs. Standard library only: rich is imported
lazily, and only when stdout is an interactive terminal (a live bar with the ETA); CI logs and pipes
get plain lines, one per finished case, and one summary line per executable for skipped cases (a
machine without a GPU skips every case: one line says so, not 240).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from triaudit.core.terminal import interactive

# Google Benchmark's console line for a case that failed or was skipped (1.7: ERROR OCCURRED with a
# "skipped:" message; 1.8+: SKIPPED).
_PROBLEM = re.compile(r"^(\S+)\s+(?:ERROR OCCURRED|SKIPPED):?\s*'?(.*?)'?\s*$")


@dataclass
class Line:
    kind: str  # "case" (a case finished), "skipped", "error" (a case), "note" (anything else worth showing)
    case: str = ""
    text: str = ""


def classify(line: str, name: str) -> Line | None:
    """One line of an executable's console output -> what it means for progress (None: not shown)."""
    text = line.rstrip()
    first = text.split(" ", 1)[0]
    if "/" in first and not first.startswith(name):
        case = first.removesuffix("_median")
        m = _PROBLEM.match(text)
        if m:
            msg = m.group(2)
            return Line("skipped" if msg.startswith("skipped:") or "SKIPPED" in text else "error", m.group(1), msg)
        if first.endswith(("_mean", "_stddev", "_cv")):
            return None
        return Line("case", case, text)
    if "every case is reported as skipped" in text:
        return None  # the executable's own no-device line: the skip summary says it, once
    if "no CUDA device" in text or "error" in text.lower():
        # The executables prefix their own messages with their name: do not add it twice.
        return Line("note", "", text if text.startswith(f"{name}:") else f"{name}: {text}")
    return None


@dataclass
class Tally:
    name: str
    total: int
    start: float = field(default_factory=time.monotonic)
    seen: set = field(default_factory=set)
    skipped: dict = field(default_factory=dict)  # reason -> count
    errors: int = 0

    def count(self, case: str) -> bool:
        """True the first time a case is seen (repetitions print one line each)."""
        case = re.sub(r"/(manual_time|real_time)$", "", case)
        if case in self.seen:
            return False
        self.seen.add(case)
        return True

    def summary(self) -> str | None:
        parts = [f"{n} skipped: {reason.removeprefix('skipped: ')}" for reason, n in self.skipped.items()]
        if self.errors:
            parts.append(f"{self.errors} failed (reasons in its log)")
        return f"  {self.name}: " + "; ".join(parts) if parts else None


class PlainProgress:
    """One line per finished case: CI logs, pipes, files."""

    MAX_ERROR_LINES = 20

    def __init__(self, log=print):
        self.log = log

    def begin(self, name: str, total: int) -> Tally:
        return Tally(name, total)

    def line(self, t: Tally, ev: Line) -> None:
        if ev.kind == "note":
            self.log(f"  {ev.text}")
            return
        if not t.count(ev.case):
            return
        if ev.kind == "skipped":
            t.skipped[ev.text] = t.skipped.get(ev.text, 0) + 1
            return
        if ev.kind == "error":
            t.errors += 1
            if t.errors > self.MAX_ERROR_LINES:
                return
        elapsed = time.monotonic() - t.start
        self.log(f"  [{t.name} {len(t.seen)}/{t.total or '?'} {elapsed:5.0f}s] {ev.text[:150]}")

    def end(self, t: Tally) -> None:
        s = t.summary()
        if s:
            self.log(s)

    def close(self) -> None:
        pass


class RichProgress(PlainProgress):
    """A live bar per executable with the cases done, elapsed time and ETA (an interactive terminal)."""

    def __init__(self, log=print):
        super().__init__(log)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = Console()
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        # Everything the run says goes through the bar's console, so lines and the bar do not collide.
        self.log = lambda text: self.console.print(text, markup=False, highlight=False)
        self.task = None
        self.progress.start()

    def begin(self, name: str, total: int) -> Tally:
        self.task = self.progress.add_task(name, total=total or None)
        return Tally(name, total)

    def line(self, t: Tally, ev: Line) -> None:
        if ev.kind == "note":
            self.progress.console.print(f"  {ev.text}", markup=False, highlight=False)
            return
        if not t.count(ev.case):
            return
        self.progress.advance(self.task)
        if ev.kind == "skipped":
            t.skipped[ev.text] = t.skipped.get(ev.text, 0) + 1
        elif ev.kind == "error":
            t.errors += 1
            self.progress.console.print(f"  {ev.text[:200]}", markup=False, highlight=False)
        else:
            self.progress.update(self.task, description=f"{t.name} {ev.case[:60]}")

    def end(self, t: Tally) -> None:
        self.progress.update(self.task, description=t.name)
        s = t.summary()
        if s:
            self.progress.console.print(s, markup=False, highlight=False)

    def close(self) -> None:
        self.progress.stop()


def wants_rich(stream=None, env=None) -> bool:
    """A live bar only on an interactive terminal that can draw one, and where rich is installed."""
    if not interactive(stream, env):
        return False
    try:
        import importlib.util

        return importlib.util.find_spec("rich") is not None
    except (ImportError, ValueError):
        return False


def choose(log=print, stream=None, env=None) -> PlainProgress:
    """RichProgress on an interactive terminal (when the caller logs to the terminal), PlainProgress otherwise."""
    if log is print and wants_rich(stream, env):
        try:
            return RichProgress(log)
        except Exception:  # a terminal rich cannot drive: plain lines still work
            pass
    return PlainProgress(log)
