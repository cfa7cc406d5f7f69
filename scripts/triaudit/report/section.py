"""What a report section is (tables, figures, notes, its CSV) and the helpers every section's
figures and notes share. The sections themselves are report/sections/, one module each."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from triaudit.results.table import plain


@dataclass
class Section:
    key: str
    title: str
    tables: list = field(default_factory=list)  # (caption, DataFrame with cards as columns)
    figures: list = field(default_factory=list)  # (file stem, caption, matplotlib figure)
    csv: pd.DataFrame | None = None
    notes: list = field(default_factory=list)


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

    return plt


def not_measured(df: pd.DataFrame, corner: str) -> list[str]:
    s = plain(df[(df["corner"] == corner) & (df["status"] != "ok")]) if not df.empty else df
    out = []
    for (card, status), g in s.groupby(["card", "status"]):
        out.append(f"{card}: {len(g)} case(s) {status}, e.g. `{g['case'].iloc[0]}`: {g['message'].iloc[0]}")
    return out


# --- bandwidth --------------------------------------------------------------------------------
