"""Deciding whether two sets of repetitions differ: the Mann-Whitney U test (scipy.stats) and a
minimum effect size.

SciPy picks the normal approximation as soon as there are ties, which for the 5-against-5
repetitions of a nightly run is far from exact (and ties are common in quantised timings). So:
samples of at most EXACT_MAX values together get the exact p-value (the exact distribution without
ties, the exact permutation distribution of the mid-ranks with them: every split is enumerated);
larger ones the normal approximation with tie and continuity corrections.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

EXACT_MAX = 20  # n1 + n2 up to this: exact (C(20, 10) = 184756 splits at most)


def mann_whitney_u(a: list[float], b: list[float]) -> tuple[float, float]:
    """(U statistic of `a`, two-sided p-value)."""
    from scipy.stats import PermutationMethod, mannwhitneyu

    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return math.nan, 1.0
    pooled = list(a) + list(b)
    if len(set(pooled)) == 1:  # nothing to rank: no evidence either way
        return n1 * n2 / 2, 1.0
    if n1 + n2 <= EXACT_MAX:
        ties = len(set(pooled)) < n1 + n2
        # n_resamples >= the number of splits makes SciPy enumerate them all: exact, not random.
        method = PermutationMethod(n_resamples=math.comb(n1 + n2, n1)) if ties else "exact"
    else:
        method = "asymptotic"
    r = mannwhitneyu(a, b, alternative="two-sided", method=method, use_continuity=True)
    return float(r.statistic), min(1.0, float(r.pvalue))


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
