"""STREAM (bandwidth corner) tables and plot: cards as columns, GB/s = 1e9 bytes/s."""

from __future__ import annotations

import math

import pandas as pd

from triaudit.report import frames as F
from triaudit.report.section import Section, not_measured
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
    text = (
        f"{row['gbps']:.0f} ±{row['spread_pct'] / 2:.1f}%"
        if not math.isnan(row["spread_pct"])
        else f"{row['gbps']:.0f}"
    )
    if not math.isnan(row.get("peak_fraction", math.nan)):
        text += f" ({row['peak_fraction'] * 100:.0f}%)"
    return text


def hbm_table(s: pd.DataFrame) -> pd.DataFrame:
    """Per card, the largest array it measured, cold: the HBM figure."""
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
    best["cell"] = [f"{r['gbps']:.0f} (at {int(r['working_set_bytes']) >> 20} MiB)" for r in records(best)]
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


def plot_figure(df: pd.DataFrame, file_contexts: dict[str, dict]):
    """Bandwidth against working-set size: panels fp32/fp64 x hot/cold, a line per card and
    op, each card's L2 size marked. None when there is nothing to plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    s = stream_frame(df)
    if not s.empty:  # log axes: only what has a positive size and bandwidth (older files lack the size)
        s = s[(s["working_set_bytes"] > 0) & (s["gbps"] > 0)]
    if s.empty:
        return None
    contexts = card_contexts(df, file_contexts)
    types = [t for t in ("fp32", "fp64") if t in set(s["type"])]
    caches = [c for c in ("hot", "cold") if c in set(s["cache"])]
    fig, axes = plt.subplots(
        len(types), len(caches), figsize=(6.5 * len(caches), 4.5 * len(types)), squeeze=False, sharey=True
    )
    cards = sorted(s["card"].unique())
    styles = ["-", "--", ":", "-."]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, t in enumerate(types):
        for j, c in enumerate(caches):
            ax = axes[i][j]
            sub = s[(s["type"] == t) & (s["cache"] == c)]
            for ci, card in enumerate(cards):
                for oi, op in enumerate(OPS):
                    line = sub[(sub["card"] == card) & (sub["op"] == op)].sort_values("working_set_bytes")
                    if line.empty:
                        continue
                    ax.plot(
                        line["working_set_bytes"] / 2**20,
                        line["gbps"],
                        marker="o",
                        markersize=3,
                        linestyle=styles[ci % len(styles)],
                        color=colors[oi % len(colors)],
                        label=f"{card}: {op}",
                    )
                l2 = contexts.get(card, {}).get("l2_bytes")
                if l2:
                    ax.axvline(float(l2) / 2**20, color="grey", linestyle=styles[ci % len(styles)], linewidth=1)
                    ax.annotate(
                        f"L2 {card}",
                        (float(l2) / 2**20, 0.02),
                        xycoords=("data", "axes fraction"),
                        rotation=90,
                        fontsize=7,
                        color="grey",
                        ha="right",
                    )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.set_title(f"STREAM {t}, {c} ({'L2 flushed before each op' if c == 'cold' else 'data left in L2'})")
            ax.set_xlabel("working set (MiB, arrays touched × array size)")
            ax.set_ylabel("bandwidth (GB/s, 1e9 B/s)")
            ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(5, max(1, len(labels))), fontsize=8)
    fig.set_layout_engine("tight", rect=(0, 0.06 + 0.02 * (len(labels) // 5), 1, 1))  # laid out as drawn
    return fig


def stream_section(rs: ResultSet) -> Section:
    df = rs.table
    sec = Section("stream", "Bandwidth: STREAM")
    s = stream_frame(df)
    if not s.empty:
        hbm = hbm_table(s)
        if not hbm.empty:
            sec.tables.append(("HBM: largest array, L2 flushed (GB/s, ± half range, % of device-reported peak)", hbm))
            big = s[(s["cache"] == "cold")]
            big = big[big["bytes"] == big.groupby("card")["bytes"].transform("max")]
            ds = F.pivot_cells(
                big[big["op"].isin(["copy", "triad"])],
                ["op", "type"],
                lambda r: F.cell(r, 1e9, 0, F.spec_fraction(r["median"], r["card"], "bandwidth")),
            )
            if not ds.empty:
                sec.tables.append(("HBM against the datasheet bandwidth (GB/s, % of datasheet)", ds))
        l2 = l2_table(s, card_contexts(df, rs.contexts))
        if not l2.empty:
            sec.tables.append(("L2-resident: best hot bandwidth (GB/s)", l2))
        drawn, note = F.plotted(df)
        fig = plot_figure(drawn, rs.contexts)
        if fig is not None:
            sec.figures.append(("stream_bandwidth", "STREAM bandwidth against working-set size" + note, fig))
        sec.csv = csv_table(df)
    sec.notes = not_measured(df, "stream")
    return sec


# --- compute ----------------------------------------------------------------------------------
