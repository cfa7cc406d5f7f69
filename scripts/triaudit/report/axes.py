"""Readable axes for the report's figures: SI-prefixed ticks (1 k, 10 M) and binary sizes (4 KiB)
with few, well-placed ticks on log axes (core/numbers.py writes the numbers). The locator and
formatters are module-level, so a figure that uses them can be pickled to the process that draws
it (report/figures.py)."""

from __future__ import annotations

from matplotlib.ticker import FuncFormatter, Locator, NullLocator

from triaudit.core import numbers as N


class ReadableLog(Locator):
    """Ticks at powers of `base` (1, 2, 5 of a decade on short base-10 spans), at most `most`."""

    def __init__(self, base: float, most: int):
        self.base, self.most = base, most

    def __call__(self):
        lo, hi = sorted(self.axis.get_view_interval())
        return N.log_ticks(lo, hi, self.base, self.most)

    def tick_values(self, vmin, vmax):
        return N.log_ticks(min(vmin, vmax), max(vmin, vmax), self.base, self.most)


def _si_tick(v, _pos) -> str:
    return N.si(v)


def _size_tick(v, _pos) -> str:
    return N.size(v)


def _no_tick(_v, _pos) -> str:
    return ""


def si_axis(ax, which: str = "y") -> None:
    """Tick labels with SI prefixes (no "2 × 10³", no offsets) on one axis of `ax`; on a log axis
    at most 8 of them, at 1, 2, 5 of a decade when the axis spans two decades or less."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    if axis.get_scale() == "log":
        axis.set_major_locator(ReadableLog(10, 8))
        axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(_si_tick))
    axis.set_minor_formatter(FuncFormatter(_no_tick))


def size_axis(ax, which: str = "x") -> None:
    """Tick labels as binary sizes (4 KiB, 1 MiB) on a log axis of bytes: at most 7 ticks, at powers of 2."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(ReadableLog(2, 7))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(_size_tick))
