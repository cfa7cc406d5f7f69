"""What a report section is (tables, figures, notes, its CSV) and the helpers every section's
figures and notes share. The sections themselves are report/sections/, one module each."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from triaudit.core import palette
from triaudit.results.table import plain


@dataclass
class Section:
    key: str
    title: str
    tables: list = field(default_factory=list)  # (caption, DataFrame with cards as columns)
    figures: list = field(default_factory=list)  # (file stem, caption, matplotlib figure)
    csv: pd.DataFrame | None = None
    notes: list = field(default_factory=list)
    paragraphs: list = field(default_factory=list)  # text shown after the tables, before the figures
    banner: str = ""  # said first, in bold: what a reader must know before reading a figure (synthetic)
    aside: list = field(default_factory=list)  # said beside the first table (the summary's per-dollar answer)
    more: list = field(default_factory=list)  # (caption, DataFrame): detail tables, folded inside the section
    folds: bool = True  # on the page: a <details>, closed; False: open, first (the summary)


def card_colors(df: pd.DataFrame) -> dict[str, str]:
    """Every card of the report (the whole table's columns, not only those a figure draws) -> its
    colour (core/palette.py): the same card is the same colour in every figure."""
    return palette.card_colors(df["card"].dropna().unique()) if not df.empty and "card" in df else {}


def colors_for(rows: pd.DataFrame, colors: dict[str, str] | None) -> dict[str, str]:
    """`colors` (the report's map) where given, else one made from `rows` alone (a figure drawn by itself)."""
    return colors if colors else card_colors(rows)


def legend_beside(fig, ax, inside: int = 8) -> None:
    """A legend of up to `inside` entries on the axes; a longer one beside them (the figure made
    wider), where it covers no data."""
    n = len(ax.get_legend_handles_labels()[1])
    if n <= inside:
        ax.legend(fontsize=7)
        return
    ncol = 1 + (n - 1) // 24
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, ncol=ncol)
    w, h = fig.get_size_inches()
    fig.set_size_inches(w + 2.8 * ncol, h)


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Text sizes for figures shown at their own size on the page (PAGE_WIDTH_IN at figures.DPI):
    # 7 pt is 10.7 px there, above the 9 px a reader needs.
    plt.rcParams.update(
        {
            "font.size": 8,
            "axes.titlesize": 9,
            "axes.labelsize": 8,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            "legend.fontsize": 7,
            "figure.titlesize": 10,
        }
    )
    return plt


# The widest figure the page shows at its own size (1100 px at figures.DPI = 110): the HTML page's
# column is 1168 px in a 1400-px window, and a wider figure would be shrunk until its text is unreadable.
PAGE_WIDTH_IN = 10.0

# Line styles that tell variants apart (an operation, a memory kind, a precision, an algorithm; colour
# tells cards apart): (linestyle, marker).
VARIANT_STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"), ((0, (1, 1)), "x")]


def panels(n: int, panel_w: float, panel_h: float, **kw):
    """A figure of `n` panels as small multiples no wider than the page: as many per row as fit,
    the rest in further rows. Returns (fig, the n axes); unused cells are hidden."""
    import math

    plt = pyplot()
    cols = max(1, min(n, int(PAGE_WIDTH_IN // panel_w)))
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(min(PAGE_WIDTH_IN, cols * panel_w), rows * panel_h), squeeze=False, **kw
    )
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.axis("off")
    return fig, flat[:n]


def key_legends(fig, colors: dict[str, str], styles: dict[str, tuple], color_title: str, style_title: str) -> None:
    """Two short legends below the panels instead of one entry per line: what each colour is
    (cards) and what each line style is (variants), so 2 cards x 9 variants need 11 entries, not 18."""
    from matplotlib.lines import Line2D

    by_color = [Line2D([], [], color=c, linewidth=2) for c in colors.values()]
    by_style = [Line2D([], [], color="black", linestyle=ls, marker=m, markersize=4) for ls, m in styles.values()]
    handles = by_color + by_style
    labels = list(colors) + list(styles)
    ncol = min(4, max(1, len(labels)))
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=ncol,
        frameon=False,
        title=f"colour: {color_title}; line: {style_title}",
    )
    rows = -(-len(labels) // ncol)
    fig.set_layout_engine("tight", rect=(0, min(0.45, (0.35 + 0.17 * rows) / fig.get_size_inches()[1]), 1, 1))


def not_measured(df: pd.DataFrame, corner: str) -> list[str]:
    s = plain(df[(df["corner"] == corner) & (df["status"] != "ok")]) if not df.empty else df
    out = []
    for (card, status), g in s.groupby(["card", "status"]):
        out.append(f"{card}: {len(g)} case(s) {status}, e.g. `{g['case'].iloc[0]}`: {g['message'].iloc[0]}")
    return out


# --- bandwidth --------------------------------------------------------------------------------
