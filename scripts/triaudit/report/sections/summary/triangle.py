"""The triangle picture: each card's three accounts (compute: BF16 burst GEMM; bandwidth: HBM
triad; movement: pinned host → device copy) as a triangle on three axes, drawn once as fractions
of the card's own datasheet (how much of what it promises it delivers) and, with two cards or more,
once relative to the best card on each axis (what it delivers against the others). Cards differ
by line style and marker as well as colour, so the picture reads in grey."""

from __future__ import annotations

import math

from triaudit.report.section import VARIANT_STYLES, pyplot
from triaudit.report.sections.summary.headline import Headlines

AXES = (("bf16/burst", "compute\nBF16 GEMM burst"), ("triad", "bandwidth\nHBM triad"), ("h2d", "movement\npinned H2D"))
ANGLES = (90.0, 210.0, 330.0)  # compute on top
MAX_CARDS = len(VARIANT_STYLES)  # one line style each


def _xy(r: float, angle: float) -> tuple[float, float]:
    a = math.radians(angle)
    return r * math.cos(a), r * math.sin(a)


def _frame(ax, title: str, rings=(0.25, 0.5, 0.75, 1.0)) -> None:
    for ring in rings:
        pts = [_xy(ring, a) for a in ANGLES] + [_xy(ring, ANGLES[0])]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color="#bbbbbb", linewidth=0.6, zorder=0)
        # on the bottom edge of each ring, where no vertex sits
        ax.text(0, -ring / 2 - 0.015, f"{ring:.0%}", fontsize=7, color="#777777", ha="center", va="top")
    for (_, label), a in zip(AXES, ANGLES):
        x, y = _xy(1.0, a)
        ax.plot([0, x], [0, y], color="#bbbbbb", linewidth=0.6, zorder=0)
        # above the top vertex, below the bottom ones: clear of the markers drawn at 100 %
        ax.text(x, y + (0.1 if y > 0 else -0.1), label, ha="center", va="bottom" if y > 0 else "top", fontsize=8)
    ax.set_title(title)
    ax.set_xlim(-1.15, 1.15)
    ax.set_ylim(-0.9, 1.38)
    ax.set_aspect("equal")
    ax.axis("off")


def _draw(ax, cards: list[str], radii: dict[str, list[float | None]]) -> None:
    for i, card in enumerate(cards):
        r = radii[card]
        ls, marker = VARIANT_STYLES[i]
        pts = [_xy(v or 0.0, a) for v, a in zip(r, ANGLES)]
        pts.append(pts[0])
        color = f"C{i}"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=ls, marker=marker, color=color, label=card)
        ax.fill([p[0] for p in pts], [p[1] for p in pts], color=color, alpha=0.08)


def triangle_figure(h: Headlines):
    """(figure or None, caption notes): None when no card has all three accounts."""
    cards = h.cards[:MAX_CARDS]
    notes = []
    if len(h.cards) > MAX_CARDS:
        notes.append(f"drawn: the first {MAX_CARDS} of {len(h.cards)} cards; the table holds all")
    values = {c: [h.value(k, c) for k, _ in AXES] for c in cards}
    frac = {c: [v.fraction if v else None for v in vs] for c, vs in values.items()}
    best = [max((values[c][i].median for c in cards if values[c][i]), default=None) for i in range(3)]
    rel = {c: [v.median / best[i] if v and best[i] else None for i, v in enumerate(vs)] for c, vs in values.items()}
    for c in cards:
        gaps = [AXES[i][1].split("\n")[0] for i, v in enumerate(values[c]) if v is None]
        if gaps:
            notes.append(f"{c}: no {' or '.join(gaps)} figure (drawn at the centre)")
    with_sheet = [c for c in cards if any(f is not None for f in frac[c])]
    several = len([c for c in cards if any(v is not None for v in values[c])]) >= 2
    if not with_sheet and not several:
        return None, notes
    plt = pyplot()
    n = int(bool(with_sheet)) + int(several)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 4.6), squeeze=False)
    axes = list(axes[0])
    if with_sheet:
        ax = axes.pop(0)
        _frame(ax, "Fraction of each card's datasheet")
        _draw(ax, with_sheet, frac)
        unknown = [c for c in cards if c not in with_sheet]
        if unknown:
            notes.append(f"{', '.join(unknown)}: no datasheet, left out of the left panel")
    if several:
        ax = axes.pop(0)
        _frame(ax, "Relative to the best card on each axis")
        _draw(ax, cards, rel)
    handles, labels = fig.axes[-1].get_legend_handles_labels()
    rows = -(-len(labels) // 3)
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), frameon=False)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.93, bottom=0.05 + 0.06 * rows, wspace=0.05)
    return fig, notes
