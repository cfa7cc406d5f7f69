"""history.png: a card's runs as change from a baseline, so a reader sees at once what moved and by
how much. Every value is the case's median in % of the baseline's (the first run's) median,
written so that + is faster whatever the counter (a time that halves is +100 %); every panel
shares one y scale, so a 0.3 % wobble looks small beside a 9 % drop. The shaded band is the
threshold a change must pass to count (the verdict's minimum effect, `--min-effect`): Bencher's
percentage threshold, drawn as its boundary bands are (bencher.dev/docs/explanation/thresholds).

Layout: a first panel with every case (each a thin line; those that regressed in vermillion), then
one panel per group of cases (the name's corner and type: `gemm, bf16`), the groups that
regressed first, each titled with how many of its cases regressed and when. The card and the runs'
span are in the title; ticks are the runs' dates, thinned so that they never overlap."""

from __future__ import annotations

import io
import math
import re

import pandas as pd

from triaudit.core import palette

REGRESSED = "#D55E00"  # Okabe-Ito vermillion: a case that was slower than the run before
STEADY = "#999999"
BAND = "#56B4E9"
MAX_TICKS = 7
DPI = 110  # as the report's figures

_STAMP = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})")


def short_label(run: str) -> str:
    """A run's tick: its date as MM-DD (HH:MM when two runs share a day: see tick_labels)."""
    m = _STAMP.match(run)
    return f"{m.group(2)}-{m.group(3)}" if m else run[:10]


def tick_labels(runs: list[str]) -> list[str]:
    labels = [short_label(r) for r in runs]
    if len(set(labels)) < len(labels):  # two runs a day: the time too
        labels = [f"{lab} {m.group(4)}:{m.group(5)}" if (m := _STAMP.match(r)) else lab for lab, r in zip(labels, runs)]
    return labels


def group_of(case: str) -> str:
    """The panel a case is drawn in: its corner and type (`gemm, bf16`): a regression of one
    precision or data type shows as one panel, not one per shape."""
    parts = case.split("/")
    return f"{parts[0]}, {parts[2]}" if len(parts) > 2 else parts[0]


def _pct(table: pd.DataFrame, higher: pd.Series) -> pd.DataFrame:
    """Adds base (the first run's median per case) and faster_pct (+ is faster, % of base)."""
    first = table.groupby("case", sort=False)["median"].transform("first")
    sign = higher.map({True: 1.0, False: -1.0}).to_numpy()
    out = table.assign(base=first)
    raw = (out["median"] - out["base"]) / out["base"].abs()
    out["faster_pct"] = 100.0 * raw * sign
    lo = 100.0 * (out["min"] - out["base"]) / out["base"].abs() * sign
    hi = 100.0 * (out["max"] - out["base"]) / out["base"].abs() * sign
    out["range_lo_pct"] = pd.concat([lo, hi], axis=1).min(axis=1)
    out["range_hi_pct"] = pd.concat([lo, hi], axis=1).max(axis=1)
    return out


def with_change(table: pd.DataFrame, higher: dict[str, bool]) -> pd.DataFrame:
    """The history table with each run's change from the baseline (history.csv's columns)."""
    return _pct(table, table["case"].map(higher))


def _panels(t: pd.DataFrame, runs: list[str], max_panels: int) -> list[tuple[str, list[str]]]:
    """(group, its cases): the groups with a regression first (the latest regression first), then
    the rest by how far their newest run moved; at most `max_panels`."""
    slower = t[t["verdict"] == "slower"]
    when = slower.groupby(slower["case"].map(group_of))["x"].max().to_dict()
    last = t[t["run"] == runs[-1]]
    moved = last.groupby(last["case"].map(group_of))["faster_pct"].apply(lambda s: s.abs().max()).to_dict()
    groups: dict[str, list[str]] = {}
    for case in dict.fromkeys(t["case"]):
        groups.setdefault(group_of(case), []).append(case)
    order = sorted(groups, key=lambda g: (g not in when, -when.get(g, 0), -moved.get(g, 0.0), g))
    return [(g, groups[g]) for g in order[:max_panels]]


def draw(
    table: pd.DataFrame, runs: list[str], card: str, min_effect: float, synthetic: bool, max_panels: int = 6
) -> bytes:
    """history.png's bytes from the table with_change made (one row per case and run)."""
    import matplotlib.pyplot as plt
    from PIL import Image  # matplotlib's own dependency

    fig = figure(table, runs, card, min_effect, synthetic, max_panels)
    fig.canvas.draw()
    png = io.BytesIO()
    w, h = fig.canvas.get_width_height()
    Image.frombuffer("RGBA", (w, h), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).save(
        png, format="png", compress_level=3
    )
    plt.close(fig)
    return png.getvalue()


def figure(table: pd.DataFrame, runs: list[str], card: str, min_effect: float, synthetic: bool, max_panels: int = 6):
    """The figure: an overview of every case, then a panel per group (_panels)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.collections import LineCollection

    plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7})
    t = table.assign(x=table["run"].map({r: i for i, r in enumerate(runs)}))
    # One row per case, one column per run: every line below is a row of this matrix.
    grid = t.pivot(index="case", columns="x", values="faster_pct").reindex(columns=range(len(runs)))
    cases = list(grid.index)
    row = {c: i for i, c in enumerate(cases)}
    values = grid.to_numpy(dtype=float)
    xs = np.arange(len(runs), dtype=float)
    slower = t[t["verdict"] == "slower"]
    regressed = set(slower["case"])
    first_slower = slower.sort_values("x").drop_duplicates("case").set_index("case")["x"].to_dict()
    shown = _panels(t, runs, max_panels)
    cols = 2
    rows = 1 + math.ceil(len(shown) / cols)
    height = 1.5 + 2.45 * rows
    fig = plt.figure(figsize=(10.0, height), dpi=DPI)
    # Fixed margins (in inches, so they hold for any number of rows): no layout pass over the text.
    fig.subplots_adjust(
        left=0.9 / 10, right=1 - 0.2 / 10, top=1 - 0.95 / height, bottom=0.35 / height, hspace=0.62, wspace=0.12
    )
    spec = fig.add_gridspec(rows, cols)
    overview = fig.add_subplot(spec[0, :])
    axes = [fig.add_subplot(spec[1 + i // cols, i % cols], sharey=overview) for i in range(len(shown))]

    band = 100.0 * min_effect
    lo = min(-3 * band, float(np.nanmin(t["range_lo_pct"])))
    hi = max(3 * band, float(np.nanmax(t["range_hi_pct"])))
    pad = 0.08 * (hi - lo)
    labels = tick_labels(runs)
    step = max(1, math.ceil(len(runs) / MAX_TICKS))
    ticks = list(range(0, len(runs), step))
    card_colour = palette.card_color(card, [card])

    def frame(ax, title: str, color: str = "black") -> None:
        ax.axhspan(-band, band, color=BAND, alpha=0.18, linewidth=0)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_xlim(-0.4, len(runs) - 0.6)
        ax.set_xticks(ticks, [labels[i] for i in ticks])
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title(title, color=color, loc="left")

    def lines(ax, which: list[str], color: str, width: float, alpha: float) -> None:
        if which:
            segs = [np.column_stack([xs, values[row[c]]]) for c in which]  # each (runs, 2)
            ax.add_collection(
                LineCollection(segs, colors=color, linewidths=width, alpha=alpha, gid=palette.card_gid(card))
            )

    steady = [c for c in cases if c not in regressed]
    lines(overview, steady, card_colour, 0.5, 0.35)
    lines(overview, sorted(regressed), REGRESSED, 0.9, 1.0)
    frame(
        overview,
        f"every case ({len(cases):,}): {len(regressed):,} slower than the run before at some run"
        + (" (vermillion)" if regressed else "")
        + f"; the other {len(steady):,} in the card's colour",
    )
    overview.set_ylabel("change from the first run\n(%; + is faster)")

    for ax, (group, members) in zip(axes, shown):
        hit = [c for c in members if c in regressed]
        lines(ax, [c for c in members if c not in regressed], card_colour, 0.8, 0.7)
        lines(ax, hit, REGRESSED, 0.8, 0.8)
        if hit:
            at = [first_slower[c] for c in hit]
            ax.scatter(
                at,
                [values[row[c], int(x)] for c, x in zip(hit, at)],
                s=36,
                facecolors="none",
                edgecolors=REGRESSED,
                zorder=3,
            )
            when = ", ".join(sorted({labels[int(x)] for x in at}))
            title = f"REGRESSED {group}\n{len(hit)} of {len(members)} case(s) slower at {when}"
        else:
            title = f"{group}\n{len(members)} case(s), none slower than the run before"
        frame(ax, title, REGRESSED if hit else "black")
    left = len({group_of(c) for c in cases}) - len(shown)
    more = f"\n{left} more group(s): only in the first panel and history.csv" if left else ""
    prefix = "SYNTHETIC, NOT MEASUREMENTS: " if synthetic else ""
    fig.suptitle(
        f"{prefix}{card}: {len(runs)} runs, {labels[0]} to {labels[-1]}\nchange from the first run's median "
        f"(+ is faster); shaded: ±{band:g} %, the minimum effect a verdict needs{more}",
        fontsize=9,
    )
    return fig
