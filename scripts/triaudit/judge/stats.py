"""Deciding whether two sets of repetitions differ: the Mann-Whitney U test and a minimum effect size.

SciPy picks the normal approximation as soon as there are ties, which for the 5-against-5
repetitions of a nightly run is far from exact (and ties are common in quantised timings). So:
samples of at most EXACT_MAX values together get the exact p-value (the exact distribution without
ties, the exact permutation distribution of the mid-ranks with them: every split is counted);
larger ones the normal approximation with tie and continuity corrections. These are the p-values
`scipy.stats.mannwhitneyu` gives with method "exact" (no ties), a `PermutationMethod` over every
split (ties) and "asymptotic" (scripts/tests/test_stats.py holds them equal on random samples),
computed here by counting: `history` judges a thousand cases per night, and SciPy's call costs a
millisecond each where a count of the splits' rank sums, cached per shape, costs microseconds.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache

EXACT_MAX = 20  # n1 + n2 up to this: exact (C(20, 10) = 184756 splits at most)


def _mid_ranks(pooled: list[float]) -> list[float]:
    """Ranks 1..n of `pooled` in its order, tied values sharing the mean of their ranks."""
    order = sorted(range(len(pooled)), key=pooled.__getitem__)
    ranks = [0.0] * len(pooled)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and pooled[order[j + 1]] == pooled[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@lru_cache(maxsize=4096)
def _rank_sum_counts(doubled: tuple[int, ...], n1: int) -> tuple[dict[int, int], int]:
    """{2 x rank sum: the number of ways n1 of the (doubled, integer) mid-ranks add up to it},
    over every split of the pooled values into n1 and the rest; and the number of splits."""
    ways: list[dict[int, int]] = [{0: 1}] + [{} for _ in range(n1)]
    for r in doubled:
        for k in range(min(n1, len(doubled)), 0, -1):
            below, here = ways[k - 1], ways[k]
            for total, count in below.items():
                here[total + r] = here.get(total + r, 0) + count
    return ways[n1], math.comb(len(doubled), n1)


def _exact_p(ranks: list[float], n1: int, u1: float, ties: bool) -> float:
    """Two-sided p of U1 over every split: without ties 2 x P(U >= max(U1, U2)) (the U
    distribution is symmetric); with ties 2 x the smaller tail of the permutation distribution."""
    counts, splits = _rank_sum_counts(tuple(sorted(int(round(2 * r)) for r in ranks)), n1)
    offset = n1 * (n1 + 1)  # 2 x (U1 = R1 - n1 (n1 + 1) / 2)
    observed = int(round(2 * u1))
    if not ties:
        u_max = max(observed, 2 * len(ranks[n1:]) * n1 - observed)
        tail = sum(c for s, c in counts.items() if s - offset >= u_max)
        return min(1.0, 2 * tail / splits)
    low = sum(c for s, c in counts.items() if s - offset <= observed)
    high = sum(c for s, c in counts.items() if s - offset >= observed)
    return min(1.0, 2 * min(low, high) / splits)


def _asymptotic_p(ranks: list[float], n1: int, n2: int, u1: float) -> float:
    """The normal approximation with the tie and continuity corrections (SciPy's "asymptotic")."""
    n = n1 + n2
    ties: dict[float, int] = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    tie_term = sum(t**3 - t for t in ties.values())
    s = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    u = max(u1, n1 * n2 - u1)
    z = (u - n1 * n2 / 2 - 0.5) / s
    return min(1.0, math.erfc(z / math.sqrt(2.0)))  # 2 x the normal survival function at z


def mann_whitney_u(a: list[float], b: list[float]) -> tuple[float, float]:
    """(U statistic of `a`, two-sided p-value)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return math.nan, 1.0
    pooled = [float(x) for x in a] + [float(x) for x in b]
    if len(set(pooled)) == 1:  # nothing to rank: no evidence either way
        return n1 * n2 / 2, 1.0
    ranks = _mid_ranks(pooled)
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    if n1 + n2 <= EXACT_MAX:
        return u1, _exact_p(ranks, n1, u1, ties=len(set(pooled)) < n1 + n2)
    return u1, _asymptotic_p(ranks, n1, n2, u1)


@dataclass
class Verdict:
    verdict: str  # faster, slower, same, uncertain (not significant), untested (too few repetitions)
    change: float  # relative change of the medians, in the "better" direction (+ = better)
    p_value: float
    reason: str


def decide(
    baseline: list[float],
    new: list[float],
    higher_is_better: bool,
    alpha: float = 0.05,
    min_effect: float = 0.02,
    min_repetitions: int = 4,
    p_for_same: bool = True,
) -> Verdict:
    """faster / slower: significant (p < alpha) and at least `min_effect` relative change;
    same: the change is below `min_effect`; uncertain: a large change that the repetitions do not
    support; untested: too few repetitions to test at all (the change is still given).
    `p_for_same=False`: a change below `min_effect` is "same" without its p-value (NaN), which
    decides nothing (history asks only for verdicts: a year of runs is thousands of tests)."""
    if not baseline or not new:
        return Verdict("untested", math.nan, math.nan, "no values")
    mb, mn = statistics.median(baseline), statistics.median(new)
    raw = (mn - mb) / abs(mb) if mb else math.nan  # new vs baseline, as the counter moved
    change = raw * (1 if higher_is_better else -1)
    said = f"{raw * 100 + 0.0:+.1f}%"  # reasons quote the counter's own move (+ 0.0: no "-0.0")
    if len(baseline) < min_repetitions or len(new) < min_repetitions:
        what = f"{said} not tested" if mb else "baseline median is 0"
        return Verdict(
            "untested",
            change,
            math.nan,
            f"too few repetitions ({len(baseline)} and {len(new)}; need {min_repetitions} each): {what}",
        )
    if mb == 0:
        return Verdict("uncertain", math.nan, math.nan, "baseline median is 0")
    if not p_for_same and abs(change) < min_effect:
        return Verdict("same", change, math.nan, f"change {said} below the {min_effect * 100:.0f}% threshold")
    _, p = mann_whitney_u(baseline, new)
    if abs(change) < min_effect:
        return Verdict("same", change, p, f"change {said} below the {min_effect * 100:.0f}% threshold")
    if p < alpha:
        return Verdict("faster" if change > 0 else "slower", change, p, f"{said}, p = {p:.3g}")
    return Verdict("uncertain", change, p, f"{said} but p = {p:.3g} ≥ {alpha}: the repetitions overlap")
