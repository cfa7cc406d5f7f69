"""Deciding whether two sets of repetitions differ: the Mann-Whitney U test (exact for small
samples, normal approximation with tie correction beyond) and a minimum effect size.
No SciPy needed; tested against hand-computed cases."""
from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def mann_whitney_u(a: list[float], b: list[float]) -> tuple[float, float]:
    """(U statistic of `a`, two-sided p-value)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return math.nan, 1.0
    ranks = _ranks(list(a) + list(b))
    r1 = sum(ranks[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    if n1 + n2 <= 20:
        # Exact: the rank sums of every split of the pooled ranks into groups of n1 and n2.
        total = 0
        extreme = 0
        observed = abs(u1 - mean)
        for combo in itertools.combinations(range(n1 + n2), n1):
            u = sum(ranks[i] for i in combo) - n1 * (n1 + 1) / 2
            total += 1
            if abs(u - mean) >= observed - 1e-9:
                extreme += 1
        return u1, extreme / total
    n = n1 + n2
    ties = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    tie_term = sum(t ** 3 - t for t in ties.values()) / (n * (n - 1))
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term))
    if sigma == 0:
        return u1, 1.0
    z = (abs(u1 - mean) - 0.5) / sigma
    return u1, math.erfc(max(z, 0) / math.sqrt(2))


@dataclass
class Verdict:
    verdict: str          # faster, slower, same, uncertain
    change: float         # relative change of the medians, in the "better" direction (+ = better)
    p_value: float
    reason: str


def decide(baseline: list[float], new: list[float], higher_is_better: bool, alpha: float = 0.05,
           min_effect: float = 0.02, min_repetitions: int = 4) -> Verdict:
    """faster / slower: significant (p < alpha) and at least `min_effect` relative change;
    same: the change is below `min_effect`; uncertain: too few repetitions, or a large change that
    the repetitions do not support."""
    if len(baseline) < min_repetitions or len(new) < min_repetitions:
        return Verdict("uncertain", math.nan, math.nan,
                       f"too few repetitions ({len(baseline)} and {len(new)}; need {min_repetitions} each)")
    mb, mn = statistics.median(baseline), statistics.median(new)
    if mb == 0:
        return Verdict("uncertain", math.nan, math.nan, "baseline median is 0")
    change = (mn - mb) / abs(mb) * (1 if higher_is_better else -1)
    _, p = mann_whitney_u(baseline, new)
    if abs(change) < min_effect:
        return Verdict("same", change, p, f"change {change * 100:+.1f}% below the {min_effect * 100:.0f}% threshold")
    if p < alpha:
        return Verdict("faster" if change > 0 else "slower", change, p, f"{change * 100:+.1f}%, p = {p:.3g}")
    return Verdict("uncertain", change, p, f"{change * 100:+.1f}% but p = {p:.3g} ≥ {alpha}: the repetitions overlap")
