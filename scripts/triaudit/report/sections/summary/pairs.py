"""A sentence per pair of cards: how many times the second delivers the first's compute, bandwidth
and movement (ratios of the medians over each card's repetitions, the headline figures), and per
unit of money where both have a price."""

from __future__ import annotations

from itertools import combinations

from triaudit.report.sections.summary.headline import Headlines

ACCOUNTS = (
    ("bf16/burst", "compute", "BF16 GEMM burst"),
    ("triad", "bandwidth", "memory triad"),
    ("h2d", "movement", "pinned host → device"),
)
PER_MONEY = (("cost/pflops", "compute"), ("cost/tbps", "bandwidth"))


def _ratio(h: Headlines, key: str, a: str, b: str) -> float | None:
    va, vb = h.value(key, a), h.value(key, b)
    return vb.median / va.median if va and vb and va.median else None


def sentence(h: Headlines, a: str, b: str) -> str:
    """ "B over A: 1.4× compute (BF16 GEMM burst), ...": B's figure ÷ A's."""
    parts, gaps = [], []
    for key, account, what in ACCOUNTS:
        r = _ratio(h, key, a, b)
        if r is None:
            lacking = [c for c in (a, b) if h.value(key, c) is None]
            gaps.append(f"{account}: {'; '.join(f'{c} {h.why(key, c)}' for c in lacking)}")
        else:
            parts.append(f"{r:.2f}× {account} ({what})")
    text = f"{b} over {a}: " + (", ".join(parts) if parts else "no account measured on both")
    money = []
    for key, account in PER_MONEY:
        ca, cb = h.value(key, a), h.value(key, b)
        if ca and cb and cb.median:
            money.append(f"{ca.median / cb.median:.2f}× {account}")  # cost per unit: lower is more per dollar
    if money:
        text += "; per unit of money: " + ", ".join(money)
    if gaps:
        text += ". Not compared: " + ". ".join(gaps)
    return text + "."


def sentences(h: Headlines) -> list[str]:
    """One per pair, in the cards' order (the second of each pair over the first)."""
    return [sentence(h, a, b) for a, b in combinations(h.cards, 2)]
