"""The triangle picture: each card's three accounts (compute: BF16 burst GEMM; bandwidth: the memory
triad; movement: pinned host → device copy) as a triangle on three axes, drawn as small multiples:
one panel per card, never one triangle over another. The first row draws each card against its own
datasheet (how much of what it promises it delivers); with two cards or more, a second row draws
each against the best card on each axis (what it delivers against the others). Each triangle is in
its card's colour (the report's one colour per card) with its three percentages written at its
corners, so the picture reads in grey too."""

from __future__ import annotations

import math

from triaudit.core import palette
from triaudit.core.palette import card_gid
from triaudit.report.section import PAGE_WIDTH_IN, pyplot
from triaudit.report.sections.summary.headline import Headlines

AXES = (("bf16/burst", "compute\nBF16 GEMM"), ("triad", "bandwidth\nmemory triad"), ("h2d", "movement\npinned H2D"))
ANGLES = (90.0, 210.0, 330.0)  # compute on top
MAX_CARDS = 6  # panels per row of four at most; the table holds every card
PER_ROW = 4
VIEWS = ("of its own datasheet", "against the best card on each axis")


def _xy(r: float, angle: float) -> tuple[float, float]:
    a = math.radians(angle)
    return r * math.cos(a), r * math.sin(a)


def _frame(ax, title: str, color: str, rings=(0.5, 1.0)) -> None:
    for ring in rings:
        pts = [_xy(ring, a) for a in ANGLES] + [_xy(ring, ANGLES[0])]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color="#bbbbbb", linewidth=0.6, zorder=0)
        ax.text(0, -ring / 2 - 0.02, f"{ring:.0%}", fontsize=7, color="#777777", ha="center", va="top")
    for (_, label), a in zip(AXES, ANGLES):
        x, y = _xy(1.0, a)
        ax.plot([0, x], [0, y], color="#bbbbbb", linewidth=0.6, zorder=0)
        ax.text(x, y + (0.24 if y > 0 else -0.16), label, ha="center", va="bottom" if y > 0 else "top", fontsize=7)
    ax.set_title(title, fontsize=8, color=color)
    ax.set_xlim(-1.45, 1.45)
    ax.set_ylim(-1.2, 1.65)
    ax.set_aspect("equal")
    ax.axis("off")


def _draw(ax, card: str, radii: list[float | None], color: str) -> None:
    """One triangle; each corner's percentage beside it (a missing axis: at the centre, "—")."""
    pts = [_xy(min(v or 0.0, 1.3), a) for v, a in zip(radii, ANGLES)]
    closed = pts + [pts[0]]
    gid = card_gid(card)
    ax.plot(
        [p[0] for p in closed], [p[1] for p in closed], color=color, linewidth=1.8, marker="o", markersize=3, gid=gid
    )
    ax.fill([p[0] for p in closed], [p[1] for p in closed], color=color, alpha=0.15, gid=gid)
    for (x, y), v, a in zip(pts, radii, ANGLES):
        dx, dy = _xy(0.2, a)
        text = "—" if v is None else f"{v:.0%}"
        ax.text(x + dx, y + dy * 0.6, text, fontsize=7, ha="center", va="center", color="#222222")


def triangle_figure(h: Headlines):
    """(figure or None, caption notes): None when no card has any of the three accounts."""
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
    unknown = [c for c in cards if c not in with_sheet]
    if with_sheet and unknown:
        notes.append(f"{', '.join(unknown)}: no datasheet, no panel in the first row")
    rows_of = [(VIEWS[0], with_sheet, frac)] if with_sheet else []
    rows_of += [(VIEWS[1], cards, rel)] if several else []
    cols = min(PER_ROW, max(len(r[1]) for r in rows_of))
    layout = [(view, chunk, data) for view, who, data in rows_of for chunk in _chunks(who, cols)]
    plt = pyplot()
    side = min(2.6, PAGE_WIDTH_IN / cols)
    fig, axes = plt.subplots(len(layout), cols, figsize=(side * cols, side * 1.08 * len(layout)), squeeze=False)
    colors = card_colors_of(h)
    for row, (view, chunk, data) in zip(axes, layout):
        for ax in row[len(chunk) :]:
            ax.axis("off")
        for ax, card in zip(row, chunk):
            _frame(ax, f"{card}\n{view}", colors[card])
            _draw(ax, card, data[card], colors[card])
    fig.subplots_adjust(left=0.01, right=0.99, top=0.93, bottom=0.02, wspace=0.05, hspace=0.25)
    return fig, notes


def card_colors_of(h: Headlines) -> dict[str, str]:
    """The report's colour of each card (made over all its cards, as every other figure's)."""
    return h.colors or palette.card_colors(h.cards)


def _chunks(items: list, n: int) -> list[list]:
    return [items[i : i + n] for i in range(0, len(items), n)]
