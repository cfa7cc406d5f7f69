"""Durations as people write them, from seconds to days: "90s", "10m", "1h", "2d", a sum of those
("1h30m", "2d 12h") or plain seconds ("3600"). Standard library only (`soak` runs on bare GPU
nodes)."""

from __future__ import annotations

import argparse
import math
import re

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
MAX_S = 366 * 86400.0  # a year: anything longer is a typo
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")


def parse_duration(text: str) -> float:
    """Seconds in `text`; ValueError saying what is wrong with it."""
    t = text.strip().lower()
    if not t:
        raise ValueError("empty: give a duration such as 90s, 10m, 1h or 2d")
    try:
        seconds = float(t)
    except ValueError:
        pos, seconds = 0, 0.0
        for m in _PART.finditer(t):
            if t[pos : m.start()].strip():
                break
            seconds += float(m.group(1)) * UNITS[m.group(2)]
            pos = m.end()
        if pos == 0 or t[pos:].strip():
            raise ValueError(
                f"{text!r} is not a duration: use a number with s, m, h or d (90s, 10m, 1h30m, 2d)"
            ) from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{text!r}: a duration must be more than 0 seconds")
    if seconds > MAX_S:
        raise ValueError(f"{text!r}: at most 366 days")
    return seconds


def duration_arg(text: str) -> float:
    """argparse type: a bad duration is refused with the reason (exit 2)."""
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def format_duration(seconds: float) -> str:
    """3725 -> "1h 2m 5s"; 90 -> "1m 30s"; 0.5 -> "0.5s"."""
    if seconds < 1:
        return f"{seconds:g}s"
    s = int(round(seconds))
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if s >= size:
            parts.append(f"{s // size}{unit}")
            s %= size
    return " ".join(parts)
