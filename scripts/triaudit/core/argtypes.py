"""argparse types for numbers, one set for every command: a value outside its range is refused
with a message naming it (exit 2), never carried into a result. Standard library only (`run`
and `doctor` import it)."""

from __future__ import annotations

import argparse
import math


def _finite(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return v


def positive(text: str) -> float:
    v = _finite(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number: {text!r}")
    return v


def non_negative(text: str) -> float:
    v = _finite(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a number of 0 or more: {text!r}")
    return v


def count(text: str) -> int:
    v = positive(text)
    if v != int(v):
        raise argparse.ArgumentTypeError(f"must be a whole number: {text!r}")
    return int(v)


def fraction(text: str) -> float:
    """A fraction above 0, at most 1 (a utilisation, a trainable share)."""
    v = _finite(text)
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"must be a fraction above 0 and at most 1: {text!r}")
    return v


def probability(text: str) -> float:
    """A significance level: strictly between 0 and 1."""
    v = _finite(text)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (e.g. 0.05): {text!r}")
    return v


def out_folder(text: str):
    """A folder to write into: not empty (an empty --out would write into the current folder)."""
    from pathlib import Path

    if not text.strip():
        raise argparse.ArgumentTypeError("empty: name the folder to write into")
    return Path(text)
