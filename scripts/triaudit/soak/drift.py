"""Drift on a soak's time series: a rate (GEMM TFLOP/s, triad GB/s) that falls beyond its bound
while the power stays is the hardware doing less work for the same energy, and fails the soak;
a rate that falls with the power is a power or thermal limit (a note, with the throttle reasons
the report shows beside it).

Windows are compared by medians, so that noise and a window or two disturbed by the host are not
a drift: the baseline is the median of the first BASELINE_WINDOWS windows after the first (which
holds the clock's ramp and the first launches), and each later point the median of the last
SPAN_WINDOWS windows. Drift is the first point whose median rate is more than `bound` below the
baseline while its median power is less than `bound` below the baseline power (or unknown). A
median of five ignores two outliers among them; five one-minute windows are five minutes, long
enough that a few disturbed windows cannot make a drift, short enough that a real one shows
within minutes of its start. Standard library only.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

SKIP_WINDOWS = 1  # the first window: clocks ramping, first launches
BASELINE_WINDOWS = 5
SPAN_WINDOWS = 5
NEEDED = SKIP_WINDOWS + BASELINE_WINDOWS + SPAN_WINDOWS  # windows before a drift can be judged


@dataclass(frozen=True)
class Point:
    window: int
    time_unix: float
    rate: float  # FLOP/s or bytes/s
    power_w: float | None  # the GPU's mean power over the window; None: unknown


@dataclass(frozen=True)
class Drift:
    """The first point beyond the bound, and how far the rate fell at worst."""

    window: int
    time_unix: float
    fall: float  # the rate's median fall at that point, relative to the baseline (0.04 = 4 %)
    power_fall: float | None  # the power's, at that point (None: unknown)
    worst_fall: float
    baseline_rate: float
    baseline_power_w: float | None
    throttled: bool  # the power fell with the rate: a limit, not a drift


def _median_power(points: list[Point]) -> float | None:
    known = [p.power_w for p in points if p.power_w is not None]
    return statistics.median(known) if len(known) * 2 > len(points) else None


def find_drift(series: list[Point], bound: float) -> Drift | None:
    """The drift of one series beyond `bound` (a fraction): the first point where the rate fell
    while the power stayed, else the first where both fell (throttled); None when the rate never
    fell beyond the bound or the series is too short to judge (`judgeable` says which)."""
    points = sorted((p for p in series if p.rate > 0), key=lambda p: p.window)
    if len(points) < NEEDED:
        return None
    base = points[SKIP_WINDOWS : SKIP_WINDOWS + BASELINE_WINDOWS]
    base_rate = statistics.median(p.rate for p in base)
    base_power = _median_power(base)
    first: Drift | None = None
    limited: Drift | None = None
    worst = 0.0
    for end in range(SKIP_WINDOWS + BASELINE_WINDOWS + SPAN_WINDOWS, len(points) + 1):
        span = points[end - SPAN_WINDOWS : end]
        fall = 1.0 - statistics.median(p.rate for p in span) / base_rate
        if fall <= bound:
            continue
        power = _median_power(span)
        power_fall = None if power is None or base_power is None else 1.0 - power / base_power
        worst = max(worst, fall)
        at = span[-1]
        found = Drift(at.window, at.time_unix, fall, power_fall, fall, base_rate, base_power, False)
        if power_fall is not None and power_fall >= bound:
            limited = limited or replace(found, throttled=True)
        elif first is None:
            first = found
    chosen = first or limited
    if chosen is None:
        return None
    return replace(chosen, worst_fall=worst)


def judgeable(series: list[Point]) -> bool:
    return sum(1 for p in series if p.rate > 0) >= NEEDED
