"""One colour per card, the same in every figure: Okabe and Ito's palette (distinct for the common
kinds of colour blindness; https://jfly.uni-koeln.de/color/), in a fixed order, handed out to a
report's cards in the order of its columns. Colour says which card; what a line is (an operation,
a memory kind, a precision) is said by its marker, line style or panel, never by colour.

Every figure that draws cards takes its colours from `card_colors` over ALL of the report's cards
(not only those it draws), and tags each artist it draws for a card with `card_gid(card)`, so the
figure's own artists can be read back and checked (report/figures.py: Drawn.card_colors)."""

from __future__ import annotations

from collections.abc import Iterable

# Okabe-Ito's seven colours, yellow (faint on white) last; its black is kept for the datasheet and
# reference marks. Beyond seven cards the colours repeat: plots draw at most a few cards
# (report/frames.py MAX_PLOT_COLUMNS, six triangles) and say which; the tables hold all.
OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
)
REFERENCE = "#000000"  # datasheet peaks, limits: not a card
NO_CARD = "no GPU"

_GID = "card:"


def report_cards(cards: Iterable) -> list[str]:
    """The cards a report's figures colour, in the order of its columns (sorted by label)."""
    return sorted({str(c) for c in cards if c is not None and c == c and str(c) != NO_CARD})


def card_colors(cards: Iterable) -> dict[str, str]:
    """{card: colour} for every card of the report: the i-th card (in column order) the i-th colour."""
    return {c: OKABE_ITO[i % len(OKABE_ITO)] for i, c in enumerate(report_cards(cards))}


def card_color(card: str, cards: Iterable) -> str:
    """The colour of `card` among the report's `cards`."""
    return card_colors(cards)[str(card)]


def card_gid(card: str) -> str:
    """The id a figure gives each artist it draws for `card`: what the checks read back."""
    return _GID + str(card)


def card_of_gid(gid: str | None) -> str | None:
    return gid[len(_GID) :] if isinstance(gid, str) and gid.startswith(_GID) else None
