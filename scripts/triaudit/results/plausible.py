"""Figures no card can produce are not measurements.

A throughput of zero or below, or a time of zero or below, is a broken measurement or a broken
file; so is a rate more than ten times what the card's datasheet allows (a throughput of 1e308, a
copy faster than ten times the memory). load_results makes each such case an error naming the
file, the case, the figure and the limit, and compare and history (which read the repetitions
themselves) ask case_problem, so no reader (report, compare, history, export, plan, outliers,
the peers' side-by-side) shows or judges it as a number.

The limit is generous on purpose (an L2-resident STREAM case reads a few times the HBM figure):
it catches nonsense, never a good card. A card that is not in the datasheets (core/specs.py) is
held to the first rule only. Non-finite values are the reader's own rule (gbench.entry_run).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from triaudit.core.specs import PRECISION_RATES, CardSpec, match_card

FACTOR = 10.0

FLOP_RATES = frozenset({"flops", "ops", "flops_best_region"})
BYTE_RATES = frozenset(
    {
        "bytes_per_second",
        "bytes_per_second_median",
        "bytes_per_second_h2d",
        "bytes_per_second_d2h",
        "bytes_per_second_total",
        "bytes_per_second_reverse",
        "algbw",
        "algbw_host_timed",
        "busbw",
        "busbw_max_rank",
        "busbw_host_timed",
    }
)
# busbw is 0 by its formula for one rank (2(n-1)/n): zero there is the figure, not a failure.
ZERO_ALLOWED = frozenset({"busbw", "busbw_max_rank", "busbw_host_timed"})
TIMES = frozenset({"time_s"})
CHECKED = FLOP_RATES | BYTE_RATES | TIMES

# The precision in a GEMM case's name -> the datasheet's rates for it ("fp8": a peer's name too).
_PRECISION = {**PRECISION_RATES, "fp8": ("fp8",)}


def flop_limit(card: CardSpec, case: str) -> tuple[float, str]:
    """The most FLOP/s (OP/s) a case can show on `card`, and what that limit is."""
    for part in case.split("/"):
        keys = _PRECISION.get(part)
        if keys:
            rates = [card.tflops[k] for k in keys if k in card.tflops]
            if rates:
                return FACTOR * max(rates) * 1e12, f"{FACTOR:g}x its datasheet {part} peak ({max(rates):g} TFLOP/s)"
    peak = max(card.tflops.values()) if card.tflops else 0.0
    return FACTOR * peak * 1e12, f"{FACTOR:g}x its highest datasheet peak ({peak:g} TFLOP/s)"


def byte_limit(card: CardSpec) -> tuple[float, str]:
    """The most bytes/s any movement on `card` can show: ten times the fastest of its memory and links."""
    fastest = max(card.mem_bw_gbps, card.nvlink_gbps, card.pcie_gbps_per_direction)
    return FACTOR * fastest * 1e9, f"{FACTOR:g}x its datasheet memory bandwidth ({fastest:g} GB/s)"


def _card(context: dict) -> CardSpec | None:
    return match_card(str(context.get("gpu_name") or ""))


def case_problem(file: str, case: str, figures: dict[str, list[float]], context: dict) -> str | None:
    """Why one case's figures (counter -> its repetitions' values, time_s among them) are not a
    measurement, or None: the rules of implausible_cases for a reader that holds the repetitions."""
    name = Path(file).name
    card = _card(context)
    for metric in sorted(set(figures) & CHECKED):
        values = [v for v in figures[metric] if v == v]
        if not values:
            continue
        low, high = min(values), max(values)
        if low <= 0 and not (metric in ZERO_ALLOWED and low == 0 and high == 0):
            what = "time" if metric in TIMES else "figure"
            return f"{name}: {case}: {metric} is {low:.6g} (a {what} of zero or less is not a measurement)"
        if card is not None and metric not in TIMES:
            limit, said = flop_limit(card, case) if metric in FLOP_RATES else byte_limit(card)
            if limit > 0 and math.isfinite(limit) and high > limit:
                return f"{name}: {case}: {metric} is {high:.6g}, above {said} of {card.name}: not a measurement"
    return None


def implausible_cases(df: pd.DataFrame, contexts: dict[str, dict]) -> dict[tuple[str, str], str]:
    """(file, case) -> why, for every case of the table with a figure no card can produce."""
    if df.empty:
        return {}
    metric = df["metric"]
    rows = np.flatnonzero(metric.isin(CHECKED).to_numpy() & (df["status"] == "ok").to_numpy())
    if not len(rows):
        return {}
    sub = df.iloc[rows]
    low = sub["min"].to_numpy(dtype=float)
    high = sub["max"].to_numpy(dtype=float)
    metrics = sub["metric"].astype(str).to_numpy()
    zero_ok = np.isin(metrics, list(ZERO_ALLOWED)) & (low == 0) & (high == 0)
    bad_low = (low <= 0) & ~zero_ok
    out: dict[tuple[str, str], str] = {}
    files = sub["file"].astype(str).to_numpy()
    cases = sub["case"].astype(str).to_numpy()
    for i in np.flatnonzero(bad_low):
        what = "time" if metrics[i] in TIMES else "figure"
        out.setdefault(
            (files[i], cases[i]),
            f"{Path(files[i]).name}: {cases[i]}: {metrics[i]} is {low[i]:.6g} (a {what} of zero or less is not a measurement)",
        )
    # The ceiling: per file (one card) and per case for FLOP rates.
    rate = np.isin(metrics, list(FLOP_RATES | BYTE_RATES)) & ~bad_low
    limits: dict[tuple[str, str, bool], tuple[float, str]] = {}
    cards: dict[str, CardSpec | None] = {}
    for i in np.flatnonzero(rate):
        if files[i] not in cards:
            cards[files[i]] = _card(contexts.get(files[i], {}))
        card = cards[files[i]]
        if card is None:
            continue
        flop = metrics[i] in FLOP_RATES
        key = (files[i], cases[i] if flop else "", flop)
        if key not in limits:
            limits[key] = flop_limit(card, cases[i]) if flop else byte_limit(card)
        limit, said = limits[key]
        if limit > 0 and high[i] > limit and math.isfinite(limit):
            out.setdefault(
                (files[i], cases[i]),
                f"{Path(files[i]).name}: {cases[i]}: {metrics[i]} is {high[i]:.6g}, above {said} "
                f"of {card.name}: not a measurement",
            )
    return out
