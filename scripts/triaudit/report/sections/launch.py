"""Report section "Movement: kernel launches" (triaudit_launch): eager against CUDA Graph."""

from __future__ import annotations

import pandas as pd

from triaudit.core.palette import card_gid
from triaudit.report import frames as F
from triaudit.report.section import VARIANT_STYLES, Section, card_colors, key_legends, not_measured, pyplot
from triaudit.results.table import ResultSet


def launch_section(rs: ResultSet) -> Section:
    df = rs.table
    sec = Section("launch", "Movement: launch cost")
    t = F.metric(df, "launch", "time_s")
    if not t.empty:
        simple = t[t["op"].isin(["empty", "sync"])]
        if not simple.empty:
            sec.tables.append(
                (
                    "Per operation (µs)",
                    F.pivot_cells(simple, ["op", "variant"], lambda r: F.cell(r, 1e-6), why=F.missing(df, "launch")),
                )
            )
        fus = F.with_int(t[t["op"] == "fusion"], "steps", "bytes")
        if not fus.empty:
            sec.tables.append(
                (
                    "Fusion: time per chain (µs)",
                    F.pivot_cells(
                        fus, ["steps", "bytes", "variant"], lambda r: F.cell(r, 1e-6), why=F.missing(df, "launch")
                    ),
                )
            )
    fit = pd.concat([F.metric(df, "launch", "per_kernel_s"), F.metric(df, "launch", "fixed_s")])
    fit = fit[fit["op"] == "chain_fit"] if not fit.empty else fit
    if not fit.empty:
        fit = fit.assign(what=fit["metric"].map({"per_kernel_s": "per kernel", "fixed_s": "fixed"}))
        sec.tables.append(
            (
                "Chains of 1–1000 empty kernels, line fit (µs)",
                F.pivot_cells(
                    fit, ["variant", "what"], lambda r: F.fmt(r["median"], 1e-6), why=F.missing(df, "launch")
                ),
            )
        )
    chain = F.with_int(F.metric(df, "launch", "per_kernel_s"), "kernels")
    chain = chain[chain["op"] == "chain"] if not chain.empty else chain
    if not chain.empty:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.2))
        drawn, note = F.plotted(chain)
        variants = sorted(drawn["variant"].unique())
        colors = card_colors(df)  # colour = card, line style = eager or graph
        for (card, variant), line in drawn.groupby(["card", "variant"]):
            line = line.sort_values("kernels")
            ls, marker = VARIANT_STYLES[variants.index(variant) % len(VARIANT_STYLES)]
            ax.plot(
                line["kernels"],
                line["median"] * 1e6,
                marker=marker,
                linestyle=ls,
                color=colors[card],
                label=f"{card}: {variant}",
                gid=card_gid(card),
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("kernels in the chain")
        ax.set_ylabel("time per kernel (µs, launch to completion)")
        ax.set_title("Launch cost: eager vs CUDA Graph")
        ax.grid(True, which="both", alpha=0.3)
        # The names below the axes, never over the lines: colour = card, line style = eager or graph.
        styles = {v: VARIANT_STYLES[i % len(VARIANT_STYLES)] for i, v in enumerate(variants)}
        key_legends(fig, {c: colors[c] for c in sorted(drawn["card"].unique())}, styles, "card", "launch")
        sec.figures.append(("launch_eager_vs_graph", "Per-kernel cost of a chain, eager vs graph" + note, fig))
    sec.csv = t[["card", "case", "op", "variant", "median", "spread_pct", "reps"]] if not t.empty else None
    sec.notes = not_measured(df, "launch")
    return sec
