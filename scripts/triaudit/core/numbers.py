"""One way to write a number in the report, so two neighbouring tables never disagree on style:
thousands separators, 3 significant digits (4 where the spread reads ±0.0%), "±x.x%" for half the min-max range, "(85%)" for the fraction of the datasheet;
sizes in binary units (16 MiB), axis ticks with SI prefixes (1 k, 10 M; report/axes.py puts them
on a figure's axes)."""

from __future__ import annotations

import math

MIN_SIG, MAX_SIG = 3, 4


def _decimals(x: float, relative_spread: float | None) -> int:
    """Decimals for `x`: MIN_SIG significant digits, MAX_SIG where the spread beside it reads
    "±0.0%" (so a column's digits change only where its printed spread does); a value with more
    integer digits shows them all."""
    if x == 0 or not math.isfinite(x):
        return 0
    sig = MIN_SIG
    if relative_spread is not None and math.isfinite(relative_spread) and round(relative_spread * 100, 1) == 0:
        sig = MAX_SIG
    lead = math.floor(math.log10(abs(x))) + 1  # digits before the decimal point (<= 0 for 0.0x)
    return max(0, sig - lead)


def number(x: float | None, relative_spread: float | None = None) -> str:
    """`x` in the report's style; "" for a missing value. `relative_spread`: half the min-max
    range over the median (0.002 for ±0.2%), which sets the digits shown."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    x = float(x)
    if not math.isfinite(x):
        return "∞" if x > 0 else "−∞"
    if abs(x) >= 1e7:  # no 9-digit cells: the table's unit is wrong for this value
        return f"{x:.3g}"
    return f"{x:,.{_decimals(x, relative_spread)}f}"


def figure(median: float, scale: float = 1.0, spread_pct: float | None = None, fraction: float | None = None) -> str:
    """A table cell: median / scale, "±half-range%" and "(fraction of datasheet%)" where known."""
    if median is None or (isinstance(median, float) and math.isnan(median)):
        return ""
    v = median / scale
    has_spread = spread_pct is not None and isinstance(spread_pct, (int, float)) and not math.isnan(spread_pct)
    text = number(v, spread_pct / 200 if has_spread else None)
    if has_spread:
        text += f" ±{spread_pct / 2:.1f}%"
    if fraction is not None and not math.isnan(fraction):
        text += f" ({fraction * 100:.0f}%)"
    return text


def size(nbytes: float) -> str:
    """16777216 -> "16 MiB"; a size that is not a whole binary unit keeps one decimal."""
    try:
        n = float(nbytes)
    except (TypeError, ValueError):
        return str(nbytes)
    if not math.isfinite(n):
        return str(nbytes)
    for unit, step in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= step:
            v = n / step
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n:.0f} B"


def si(x: float) -> str:
    """An axis tick with an SI prefix: 1500 -> "1.5 k", 2e9 -> "2 G", 0.002 -> "2 m"."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    for prefix, step in (
        ("P", 1e15),
        ("T", 1e12),
        ("G", 1e9),
        ("M", 1e6),
        ("k", 1e3),
        ("", 1.0),
        ("m", 1e-3),
        ("µ", 1e-6),
        ("n", 1e-9),
    ):
        if abs(x) >= step * 0.9999:
            v = x / step
            text = f"{v:.0f}" if abs(v - round(v)) < 1e-6 else f"{v:.3g}"
            return f"{text} {prefix}".strip()
    return f"{x:.2g}"


def log_ticks(lo: float, hi: float, base: float, most: int) -> list[float]:
    """Ticks at powers of `base` (and 2x, 5x for base 10 when the span is short) between lo and hi,
    thinned to at most `most`: a readable axis whatever the span."""
    if not (lo > 0 and hi > lo):
        return []
    first, last = math.floor(math.log(lo, base)), math.ceil(math.log(hi, base))
    subs = (1.0, 2.0, 5.0) if base == 10 and last - first <= 2 else (1.0,)
    ticks = [base**e * s for e in range(first, last + 1) for s in subs if lo <= base**e * s <= hi]
    step = max(1, math.ceil(len(ticks) / most))
    return ticks[::step]
