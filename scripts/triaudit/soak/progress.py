"""What a soak says while it runs. Every line goes to the soak's log (soak.log in its folder);
on an interactive terminal the console holds one status line, rewritten in place, with the lines
that matter (events, each GPU's start and end) printed above it; in CI logs, pipes and files the
console gets the plain lines, one per GPU per window. Standard library only."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from triaudit.soak.hashlog import Window
from triaudit.soak.series import UNITS


def clock(seconds: float) -> str:
    """3725 -> 1h02m05s."""
    s = int(round(max(0.0, seconds)))
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"


def window_line(tag: str, w: Window, total: int, elapsed_s: float) -> str:
    """[gpu0 12/60 0h12m00s] gemm 712 TFLOP/s · triad 4210 GB/s · ... · 688 W · 1980 MHz · 71 C"""
    parts = []
    for key, load in w.workloads.items():
        scale, unit = UNITS.get(key, (1.0, ""))
        parts.append(f"{key} {load.rate / scale:.4g} {unit}" if load.rate > 0 else f"{key} -")
    for value, unit in ((w.power_w, "W"), (w.sm_clock_mhz, "MHz"), (w.temperature_c, "C")):
        if value is not None:
            parts.append(f"{value:.0f} {unit}")
    if w.throttled:
        parts.append(f"throttled ({w.clock_reasons or 'reason not read'})")
    bad = [f"{load.deviating} {key} differed" for key, load in w.workloads.items() if load.deviating]
    if bad:
        parts.append("SDC: " + ", ".join(bad))
    if w.error:
        parts.append(f"stopped: {w.error}")
    return f"[{tag} {w.window + 1}/{total} {clock(elapsed_s)}] " + " · ".join(parts)


class Progress:
    def __init__(self, log_path: Path, say=print, tty: bool = False):
        self.log_path, self.say, self.tty = Path(log_path), say, tty
        self._status = ""
        self._log = open(self.log_path, "a", encoding="utf-8")

    def _write_log(self, text: str) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self._log.write(f"{stamp} {text}\n")
        self._log.flush()

    def line(self, text: str, important: bool = False) -> None:
        """A plain line: always to the log; to the console unless a terminal shows the status
        line and the line is not important."""
        self._write_log(text)
        if not self.tty:
            self.say(text)
        elif important:
            self._clear()
            self.say(text)
            self._draw()

    def status(self, text: str) -> None:
        """The terminal's status line (nothing elsewhere)."""
        self._status = text
        if self.tty:
            self._draw()

    def _draw(self) -> None:
        if self._status:
            sys.stdout.write("\r\x1b[K" + self._status[:200])
            sys.stdout.flush()

    def _clear(self) -> None:
        if self._status:
            sys.stdout.write("\r\x1b[K")
            sys.stdout.flush()

    def close(self) -> None:
        if self.tty and self._status:
            self._clear()
        self._log.close()
