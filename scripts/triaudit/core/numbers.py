"""One way to write a number, so two neighbouring tables (or the report and `compare`) never
disagree on style. The decisions (docs/results.md, "How the page reads"):

- **Significant digits by spread**: a value is rounded at the decimal place of its spread's first
  significant digit (half the min-max range over repetitions), showing 3 significant digits at most
  and 2 at least; integer digits are never dropped (1,653, not 1,650). So "2.41 ±0.0%" (not
  "2.406"), "27.5 ±0.1%" beside "27.5 ±0.0%" (never "27.48" beside "27.5"), "28 ±6%".
- "±x.x%" is half the min-max range over the median; "(85%)" the fraction of the datasheet.
- **Units on every figure**: a value printed alone (compare, plan, figures) carries its unit, in
  the unit that keeps it short (828 TFLOP/s, 4.21 TB/s, 2.41 µs); INT8 and other integer GEMMs in
  TOP/s; a fraction such as the share of a copy hidden behind a kernel as a whole percentage (8%).
- **Money** with the same decimals in a table (money_decimals: whole units from 1,000, cents down
  to 0.10, three significant digits of the smallest price below that), the currency named.
- An implausible figure (above the link's or the memory's limit, sustained above burst) keeps its
  number and says why beside it (flag).

Sizes are binary units (16 MiB); axis ticks carry SI prefixes (1 k, 10 M; report/axes.py)."""

from __future__ import annotations

import math

MIN_SIG, MAX_SIG = 2, 3
WARN = "⚠"  # marks an implausible figure; the reason follows it


def _decimals(x: float, relative_spread: float | None) -> int:
    """Decimals for `x`: at most MAX_SIG significant digits, fewer (not below MIN_SIG) where the
    spread beside it is wider than the last of them; a value with more integer digits shows them all."""
    if x == 0 or not math.isfinite(x):
        return 0
    lead = math.floor(math.log10(abs(x))) + 1  # digits before the decimal point (<= 0 for 0.0x)
    sig = MAX_SIG
    if relative_spread is not None and math.isfinite(relative_spread) and relative_spread > 0:
        half = abs(x) * relative_spread  # the spread in the value's own units
        place = math.floor(math.log10(half)) + 1  # 10**(place - 1): the spread's first digit
        sig = max(MIN_SIG, min(MAX_SIG, lead - place + 1))
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
    d = _decimals(x, relative_spread)
    text = f"{x:,.{d}f}"
    return "0" if text in ("-0", "-0.0", "-0.00") else text


def figure(
    median: float,
    scale: float = 1.0,
    spread_pct: float | None = None,
    fraction: float | None = None,
    flag: str = "",
) -> str:
    """A table cell: median / scale, "±half-range%", "(fraction of datasheet%)" where known, and
    `flag` (why the figure is implausible) after a warning sign."""
    if median is None or (isinstance(median, float) and math.isnan(median)):
        return ""
    v = median / scale
    has_spread = spread_pct is not None and isinstance(spread_pct, (int, float)) and not math.isnan(spread_pct)
    text = number(v, spread_pct / 200 if has_spread else None)
    if has_spread:
        text += f" ±{spread_pct / 2:.1f}%"
    if fraction is not None and not math.isnan(fraction):
        text += f" ({fraction * 100:.0f}%)"
    return flagged(text, flag)


def flagged(text: str, why: str) -> str:
    """`text` with the reason it is implausible after a warning sign; `text` alone when there is none."""
    return f"{text} {WARN} {why}" if why else text


def percent(fraction: float | None) -> str:
    """A fraction as a whole percentage, as the datasheet fractions are: 0.08 -> "8%", 0.9612 ->
    "96%"; one decimal below 1% (0.004 -> "0.4%")."""
    if fraction is None or (isinstance(fraction, float) and math.isnan(fraction)):
        return ""
    p = fraction * 100
    return f"{p:.1f}%" if 0 < abs(p) < 1 else f"{p:.0f}%"


# A figure's unit by its counter: (unit, scale) pairs from large to small; the first whose scale
# the value reaches is used. Counters not listed print as they are.
UNITS: dict[str, tuple[tuple[str, float], ...]] = {
    "flops": (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("FLOP/s", 1.0)),
    "flops_best_region": (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("FLOP/s", 1.0)),
    "ops": (("POP/s", 1e15), ("TOP/s", 1e12), ("GOP/s", 1e9), ("OP/s", 1.0)),  # integer GEMMs
    "bytes_per_second": (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("B/s", 1.0)),
    "busbw": (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("B/s", 1.0)),
    "algbw": (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("B/s", 1.0)),
    "time_s": (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)),
    "per_kernel_s": (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)),
    "seconds_per_op": (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)),
}


def unit_for(metric: str, value: float) -> tuple[str, float]:
    """(unit, scale) that writes `value` of `metric` with 1-3 integer digits; ("", 1) if unknown."""
    steps = UNITS.get(metric) or next((v for k, v in UNITS.items() if metric.startswith(k + "_")), None)
    if not steps:
        return "", 1.0
    a = abs(value) if value == value else 0.0
    for unit, scale in steps:
        if a >= scale * 0.9995:
            return unit, scale
    return steps[-1]


def with_unit(value: float | None, metric: str, relative_spread: float | None = None) -> str:
    """A figure printed alone, with its unit: 8.281e14 flops -> "828 TFLOP/s"; 2.4e-6 time_s -> "2.40 µs";
    hidden_fraction 0.08 -> "8%"; a counter without a known unit as a plain number."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if metric.endswith("_fraction"):
        return percent(value)
    unit, scale = unit_for(metric, value)
    text = number(value / scale, relative_spread)
    return f"{text} {unit}" if unit else text


def money_decimals(values) -> int:
    """Decimals that show every price of a table alike: none where the smallest is 1,000 or more,
    cents down to 0.10, below that three significant digits of the smallest price (at most 6)."""
    small = [abs(float(v)) for v in values if v is not None and v == v and float(v) != 0 and math.isfinite(float(v))]
    if not small:
        return 2
    least = min(small)
    if least >= 1000:
        return 0
    if least >= 0.1:
        return 2
    return min(6, 2 - math.floor(math.log10(least)))


def money(v: float, currency: str = "USD", decimals: int | None = None) -> str:
    """'USD 1,190.00', 'USD 0.59': thousands separated, `decimals` (money_decimals of the table's
    prices; by default of this price alone)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    d = money_decimals([v]) if decimals is None else decimals
    return f"{currency} {v:,.{d}f}"


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
