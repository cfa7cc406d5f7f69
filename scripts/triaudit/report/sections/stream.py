"""STREAM (bandwidth corner) tables and plot: cards as columns, GB/s = 1e9 bytes/s."""

from __future__ import annotations

import math

import pandas as pd

from triaudit.core import numbers as N
from triaudit.core.palette import card_gid
from triaudit.report import axes as A
from triaudit.report import frames as F
from triaudit.report.section import (
    VARIANT_STYLES,
    Section,
    card_colors,
    colors_for,
    key_legends,
    not_measured,
    panels,
    pyplot,
)
from triaudit.results.table import ResultSet, card_contexts, plain, records

OPS = ["copy", "scale", "add", "triad", "dot"]


def stream_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The measured STREAM rows, one per (card, run, case), bandwidth and its fraction of peak."""
    if df.empty or "corner" not in df:
        return pd.DataFrame()
    s = df[(df["corner"] == "stream") & (df["status"] == "ok")]
    if s.empty or "bytes" not in s:
        return pd.DataFrame()
    # The sweep's operations only: the sustained triad (stream/triad_sustained/...) is a window at
    # one size, reported with the other sustained figures. (Made plain text once selected: small.)
    bw = plain(s[(s["metric"] == "bytes_per_second") & s["op"].isin(OPS)])
    pf = plain(s[s["metric"] == "peak_fraction"][["file", "case", "median"]]).rename(
        columns={"median": "peak_fraction"}
    )
    ws = plain(s[s["metric"] == "working_set_bytes"][["file", "case", "median"]]).rename(
        columns={"median": "working_set_bytes"}
    )
    bw = bw.merge(pf, on=["file", "case"], how="left").merge(ws, on=["file", "case"], how="left")
    bw["bytes"] = bw["bytes"].astype("int64")
    bw["gbps"] = bw["median"] / 1e9
    bw["op"] = pd.Categorical(bw["op"], categories=OPS, ordered=True)
    return bw.rename(columns={"variant": "type"})


def _cell(row) -> str:
    """GB/s ± half range, and its share of the datasheet bandwidth (of the device-reported peak for
    a card not in the datasheets); above 100 % it is flagged: no triad beats its memory."""
    frac = F.spec_fraction(row["gbps"] * 1e9, row["card"], "bandwidth")
    if frac is None:
        pf = row.get("peak_fraction", math.nan)
        frac = None if pf is None or math.isnan(pf) else pf
    flag = "above the memory's peak" if frac is not None and frac > 1.005 else ""
    return F.cell({"median": row["gbps"], "spread_pct": row["spread_pct"]}, 1.0, frac, flag)


def hbm_table(s: pd.DataFrame) -> pd.DataFrame:
    """Per card, the largest array it measured, cold: the memory figure."""
    cold = s[s["cache"] == "cold"]
    if cold.empty:
        return pd.DataFrame()
    largest = cold.groupby("card")["bytes"].transform("max")
    big = cold[cold["bytes"] == largest].copy()
    big["cell"] = [_cell(r) for r in records(big)]
    return big.pivot_table(index=["op", "type"], columns="card", values="cell", aggfunc="first", observed=True)


def l2_table(s: pd.DataFrame, contexts: dict[str, dict]) -> pd.DataFrame:
    """Per card, the best hot bandwidth among cases whose working set fits in its L2."""
    hot = s[s["cache"] == "hot"].copy()
    if hot.empty:
        return pd.DataFrame()
    l2 = hot["card"].map(lambda c: float(contexts.get(c, {}).get("l2_bytes", "nan") or "nan"))
    fits = hot[hot["working_set_bytes"] <= l2]
    if fits.empty:
        return pd.DataFrame()
    best = fits.loc[fits.groupby(["card", "op", "type"], observed=True)["gbps"].idxmax()].copy()
    best["cell"] = [f"{N.number(r['gbps'])} (at {N.size(r['working_set_bytes'])})" for r in records(best)]
    return best.pivot_table(index=["op", "type"], columns="card", values="cell", aggfunc="first", observed=True)


def csv_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every size: rows (op, type, cache, bytes), per card the median GB/s and the spread."""
    s = stream_frame(df)
    if s.empty:
        return pd.DataFrame(columns=["op", "type", "cache", "bytes"])
    wide = s.pivot_table(
        index=["op", "type", "cache", "bytes"],
        columns="card",
        values=["gbps", "spread_pct"],
        aggfunc="median",
        observed=True,
    )
    wide.columns = [f"{card} {'GB/s' if what == 'gbps' else 'spread %'}" for what, card in wide.columns]
    return wide.reset_index()


def plot_figure(df: pd.DataFrame, file_contexts: dict[str, dict], colors: dict[str, str] | None = None):
    """Bandwidth against working-set size: panels fp32/fp64 x hot/cold, colour = card (the report's
    one colour per card), marker and line style = operation, each card's L2 size marked in its
    colour. None when there is nothing to plot."""
    s = stream_frame(df)
    if not s.empty:  # log axes: only what has a positive size and bandwidth (older files lack the size)
        s = s[(s["working_set_bytes"] > 0) & (s["gbps"] > 0)]
    if s.empty:
        return None
    pyplot()
    contexts = card_contexts(df, file_contexts)
    types = [t for t in ("fp32", "fp64") if t in set(s["type"])]
    caches = [c for c in ("hot", "cold") if c in set(s["cache"])]
    combos = [(t, c) for t in types for c in caches]
    fig, axes = panels(len(combos), 5.0, 3.4, sharey=True)
    cards = sorted(s["card"].unique())
    colors = colors_for(s, colors)
    ops = [op for op in OPS if op in set(s["op"])]
    styles = {op: VARIANT_STYLES[i % len(VARIANT_STYLES)] for i, op in enumerate(ops)}
    for ax, (t, c) in zip(axes, combos):
        sub = s[(s["type"] == t) & (s["cache"] == c)]
        for card in cards:
            for op in ops:
                line = sub[(sub["card"] == card) & (sub["op"] == op)].sort_values("working_set_bytes")
                if line.empty:
                    continue
                ls, marker = styles[op]
                ax.plot(
                    line["working_set_bytes"],
                    line["median"],
                    marker=marker,
                    markersize=3,
                    linestyle=ls,
                    linewidth=1,
                    color=colors[card],
                    label=f"{card}: {op}",
                    gid=card_gid(card),
                )
            l2 = contexts.get(card, {}).get("l2_bytes")
            if l2:
                ax.axvline(float(l2), color=colors[card], linestyle=(0, (1, 2)), linewidth=1, gid=card_gid(card))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        A.size_axis(ax, "x")
        A.si_axis(ax, "y")
        ax.set_title(f"{t}, {c}: {'L2 flushed before each op' if c == 'cold' else 'data left in L2'}")
        ax.set_xlabel("working set (arrays touched × array size)")
        ax.set_ylabel("bandwidth (bytes/s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.text(0.01, 0.02, "dotted: each card's L2 size", transform=ax.transAxes, fontsize=7, color="#555555")
    key_legends(fig, {card: colors[card] for card in cards}, styles, "card", "operation")
    return fig


def stream_section(rs: ResultSet) -> Section:
    df = rs.table
    sec = Section("stream", "Bandwidth: STREAM")
    s = stream_frame(df)
    if not s.empty:
        hbm = hbm_table(s)
        if not hbm.empty:
            sec.tables.append(
                (
                    "Memory (HBM or GDDR): largest array, L2 flushed (GB/s, ± half range, % of the datasheet "
                    "bandwidth; of the device-reported peak for a card not in the datasheets)",
                    hbm,
                )
            )
        l2 = l2_table(s, card_contexts(df, rs.contexts))
        if not l2.empty:
            sec.tables.append(("L2-resident: best hot bandwidth (GB/s)", l2))
        drawn, note = F.plotted(df)
        fig = plot_figure(drawn, rs.contexts, card_colors(df))
        if fig is not None:
            sec.figures.append(("stream_bandwidth", "STREAM bandwidth against working-set size" + note, fig))
        sec.csv = csv_table(df)
    sec.notes = not_measured(df, "stream")
    return sec


# --- compute ----------------------------------------------------------------------------------
