"""Report section "Compute: GEMM": the measured compute roof, cuBLASLt per precision, the ladder, the roofline."""

from __future__ import annotations

import math

import pandas as pd

from triaudit.core import numbers as N
from triaudit.core.palette import card_gid
from triaudit.report import axes as A
from triaudit.report import frames as F
from triaudit.report.section import (
    PAGE_WIDTH_IN,
    VARIANT_STYLES,
    Section,
    card_colors,
    colors_for,
    not_measured,
    panels,
    pyplot,
)
from triaudit.results.figures import headline_figures
from triaudit.results.table import ResultSet, records


def _gemm_rate(df: pd.DataFrame) -> pd.DataFrame:
    rows = pd.concat([F.metric(df, "gemm", "flops"), F.metric(df, "gemm", "ops")])
    for col in ("m", "n", "k"):  # ceiling and LLM cases carry no m:/n:/k: in their names
        if col not in rows:
            rows[col] = math.nan
    return F.with_int(rows, "m", "n", "k")


def _library(g: pd.DataFrame) -> pd.DataFrame:
    """cuBLASLt cases and the ceiling sweep: what defines a card's compute roof (not the ladder)."""
    return g[g["op"].isin(["cublaslt", "ceiling"])] if not g.empty else g


def gemm_section(rs: ResultSet) -> Section:
    df = rs.table
    sec = Section("gemm", "Compute: GEMM")
    g = _gemm_rate(df)
    why = F.missing(df, "gemm")
    if not why.empty:  # the derived index columns of the tables below, for the cases that did not run
        why = why.assign(
            mode=why["case"].str.rsplit("/", n=1).str[-1],
            size=[
                f"{a.get('m', '')}³"
                for a in (dict(p.split(":", 1) for p in c.split("/")[3:] if ":" in p) for c in why["case"])
            ],
        )
    if not g.empty:
        ceil = g[g["op"] == "ceiling"].copy()
        frac = lambda r: F.spec_fraction(r["median"], r["card"], "compute", r["variant"])  # noqa: E731
        if not ceil.empty:
            # gemm/ceiling/<precision>/burst (best of the sweep right after a warm-up) and /sustained
            # (8192^3 over a window): what the card does at first and what it holds.
            ceil["mode"] = (
                ceil["case"]
                .str.rsplit("/", n=1)
                .str[-1]
                .where(ceil["case"].str.endswith(("/burst", "/sustained")), "sweep")
            )
            sec.tables.append(
                (
                    "Measured compute roof: burst (best of the ceiling sweep) and sustained "
                    "(TFLOP/s or TOP/s, % of datasheet)",
                    F.pivot_cells(ceil, ["variant", "mode"], lambda r: F.cell(r, 1e12, frac(r)), why=why),
                )
            )
        lt = g[g["op"].isin(["cublaslt", "torch"]) & (g["m"] == 8192) & (g["n"] == 8192) & (g["k"] == 8192)]
        if not lt.empty:
            sec.tables.append(
                (
                    "cuBLASLt (and torch.matmul where measured) at 8192³ (TFLOP/s, % of datasheet)",
                    F.pivot_cells(lt, ["op", "variant", "layout"], lambda r: F.cell(r, 1e12, frac(r)), why=why),
                )
            )
        lad = g[g["op"].str.startswith("ladder")].copy()
        if not lad.empty:
            ratio = F.metric(df, "gemm", "ratio_to_cublas")[["file", "case", "median"]].rename(
                columns={"median": "ratio"}
            )
            lad = lad.merge(ratio, on=["file", "case"], how="left")
            lad["size"] = lad["m"].astype("int64").astype(str) + "³"
            sec.tables.append(
                (
                    "Hand-written ladder (TFLOP/s, × cuBLASLt on the same shape)",
                    F.pivot_cells(
                        lad,
                        ["op", "size"],
                        lambda r: (
                            F.fmt(r["median"], 1e12) + (f" (×{r['ratio']:.2f})" if not math.isnan(r["ratio"]) else "")
                        ),
                        why=why,
                    ),
                )
            )
        drawn, note = F.plotted(_library(g))
        fig = gemm_figure(drawn, card_colors(df))
        if fig is not None:
            sec.figures.append(
                ("gemm_by_precision", "Best GEMM throughput per precision beside the datasheet peak" + note, fig)
            )
        sec.csv = g[
            ["card", "case", "op", "variant", "layout", "m", "n", "k", "metric", "median", "spread_pct", "reps"]
            if "layout" in g
            else ["card", "case", "median"]
        ]
    sec.notes = not_measured(df, "gemm")
    return sec


def gemm_figure(g: pd.DataFrame, colors: dict[str, str] | None = None):
    """Bars on a linear axis (a bar twice as tall is twice as fast): each card's best measured rate
    per precision, in the card's colour; a black tick: its datasheet peak (where the card is in the
    datasheets)."""
    plt = pyplot()
    best = g.groupby(["card", "variant"])["median"].max().reset_index()
    if best.empty:
        return None
    cards = sorted(best["card"].unique())
    colors = colors_for(best, colors)
    precs = [p for p in F.SPEC_PRECISION if p in set(best["variant"])]
    fig, ax = plt.subplots(figsize=(min(PAGE_WIDTH_IN, 2.2 + 0.55 * len(precs) * len(cards)), 4.0))
    width = 0.8 / max(1, len(cards))
    hatches = ["", "//", "..", "xx"]  # the card again, for a grey print
    drew_peak = False
    for ci, card in enumerate(cards):
        xs, ys, peaks = [], [], []
        for pi, p in enumerate(precs):
            v = best[(best["card"] == card) & (best["variant"] == p)]["median"]
            if v.empty:
                continue
            xs.append(pi + ci * width)
            ys.append(float(v.iloc[0]) / 1e12)
            spec = F.spec_for(card)
            pk = spec.peak_flops(F.SPEC_PRECISION[p]) if spec else None
            peaks.append(pk / 1e12 if pk else math.nan)
        ax.bar(
            xs,
            ys,
            width=width,
            label=card,
            color=colors[card],
            hatch=hatches[ci % len(hatches)],
            edgecolor="white",
            gid=card_gid(card),
        )
        if any(not math.isnan(p) for p in peaks):
            ax.scatter(
                xs, peaks, marker="_", s=300, color="black", zorder=3, label=None if drew_peak else "datasheet peak"
            )
            drew_peak = True
    ax.set_xticks(
        [i + width * (len(cards) - 1) / 2 for i in range(len(precs))],
        [f"{p} (TOP/s)" if p == "int8" else p for p in precs],
        rotation=30,
        ha="right",
    )
    ax.set_ylabel("TFLOP/s (TOP/s for int8), linear")
    ax.set_ylim(bottom=0)
    ax.set_title("GEMM: best measured throughput per precision")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.grid(True, axis="y", alpha=0.3)
    fig.set_layout_engine("tight")  # laid out as it is drawn
    return fig


def roofline_figure(df: pd.DataFrame, colors: dict[str, str] | None = None):
    """Per card: its headline figures (results/figures.py, as the summary quotes them) as the
    measured compute roofs (each precision's burst figure) and the memory slope (the triad), ridge
    points, GEMM cases by intensity. Every line of a card's panel in the card's colour (the report's
    one colour per card); a precision by its marker and line style, the same in every panel. The
    roofs and ridges are named in the legend, not beside the points (they overlap there)."""
    g = _library(_gemm_rate(df))
    figs = headline_figures(df)
    if g.empty or figs.empty:
        return None
    hbm = {str(r["card"]): float(r["median"]) for r in records(figs[figs["roles"].str.contains("hbm")])}
    flops = figs[figs["roles"].str.contains("flops:")]
    cards = sorted(set(g["card"]) & set(hbm) & set(flops["card"]))
    if not cards:
        return None
    colors = colors_for(g, colors)
    ai = F.metric(df, "gemm", "arithmetic_intensity")[["file", "case", "median"]].rename(columns={"median": "ai"})
    order = list(F.SPEC_PRECISION)
    styles = {p: VARIANT_STYLES[i % len(VARIANT_STYLES)] for i, p in enumerate(order)}
    fig, axes = panels(len(cards), 5.0, 4.6)
    for ax, card in zip(axes, cards):
        color, gid = colors[card], card_gid(card)
        bw = hbm[card]
        gc = g[g["card"] == card]
        mine = flops[flops["card"] == card]
        roofs = pd.Series(
            mine["median"].to_numpy(), index=[str(r).split("flops:")[1].split("|")[0] for r in mine["roles"]]
        ).sort_values(ascending=False)
        top = roofs.max() / bw  # the slope ends where the highest roof begins
        spec = F.spec_for(card)
        memory = spec.memory if spec and spec.memory else "memory"
        ax.plot(
            [0.1, top],
            [bw * 0.1, bw * top],
            color=color,
            linewidth=2,
            label=f"{memory} {N.number(bw / 1e9)} GB/s (measured triad)",
            gid=gid,
        )
        pts = gc[gc["op"] == "cublaslt"].merge(ai, on=["file", "case"], how="left")
        for prec, roof in roofs.items():
            ls, marker = styles.get(prec, VARIANT_STYLES[0])
            ridge = roof / bw
            unit = "TOP/s" if prec == "int8" else "TFLOP/s"
            ax.plot(
                [ridge, 1e5],
                [roof, roof],
                color=color,
                linestyle=ls,
                linewidth=1,
                marker=marker,
                markevery=[0],
                label=f"{prec}: {N.number(roof / 1e12)} {unit}, ridge {N.number(ridge)} FLOP/B",
                gid=gid,
            )
            p = pts[pts["variant"] == prec]
            ax.scatter(p["ai"], p["median"], s=8, color=color, alpha=0.5, marker=marker, gid=gid)
        ax.set_xscale("log")
        ax.set_yscale("log")
        A.si_axis(ax, "y")
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("FLOP/s (OP/s for int8)")
        ax.set_title(f"Measured roofline: {card}", color=color)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, frameon=False, fontsize=7)
    fig.set_size_inches(fig.get_size_inches()[0], fig.get_size_inches()[1] + 1.6)
    fig.set_layout_engine("tight")  # laid out as it is drawn
    return fig


# --- movement ---------------------------------------------------------------------------------
