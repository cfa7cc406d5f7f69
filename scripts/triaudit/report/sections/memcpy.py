"""Report section "Movement: host and device copies" (triaudit_memcpy)."""

from __future__ import annotations

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
from triaudit.results.table import ResultSet


def memcpy_section(rs: ResultSet) -> Section:
    df = rs.table
    sec = Section("memcpy", "Movement: copies")
    bw = F.with_int(F.metric(df, "memcpy", "bytes_per_second"), "bytes")
    if not bw.empty:
        largest = bw[bw["bytes"] == bw.groupby(["card", "op", "variant"])["bytes"].transform("max")]

        def frac(r):
            if r["op"] in ("h2d", "d2h"):
                return F.spec_fraction(r["median"], r["card"], "pcie")
            if r["op"] == "bidir":
                f = F.spec_fraction(r["median"], r["card"], "pcie")
                return f / 2 if f else None
            return None

        sec.tables.append(
            (
                "Largest size (GB/s, % of the PCIe link's theoretical per direction; d2d counts bytes once)",
                F.pivot_cells(
                    largest,
                    ["op", "variant"],
                    lambda r: F.cell(r, 1e9, frac(r), F.over_link(frac(r))),
                    why=F.missing(df, "memcpy"),
                ),
            )
        )
        lat = F.with_int(F.metric(df, "memcpy", "seconds_per_op"), "bytes")
        lat = lat[lat["op"] != "overlap"]  # a copy timed beside a kernel: its own table below
        small = lat[lat["bytes"] == lat.groupby(["card", "op", "variant"])["bytes"].transform("min")]
        if not small.empty:
            sec.tables.append(
                (
                    "Smallest size: time per copy (µs)",
                    F.pivot_cells(
                        small, ["op", "variant", "bytes"], lambda r: F.cell(r, 1e-6), why=F.missing(df, "memcpy")
                    ),
                )
            )
        drawn, note = F.plotted(bw)
        fig = memcpy_figure(drawn, card_colors(df))
        if fig is not None:
            sec.figures.append(
                ("memcpy_bandwidth", "Copy bandwidth against size: pinned vs pageable and the rest" + note, fig)
            )
        sec.csv = bw[["card", "case", "op", "variant", "bytes", "median", "spread_pct", "reps"]]
    ov = F.metric(df, "memcpy", "hidden_fraction")
    if not ov.empty:
        sec.tables.append(
            (
                "Copy/compute overlap: share of the copy hidden behind a kernel of equal length (%)",
                F.pivot_cells(
                    F.with_int(ov, "bytes"),
                    ["variant", "bytes"],
                    lambda r: N.percent(r["median"]),
                    why=F.missing(df, "memcpy"),
                ),
            )
        )
    sec.notes = not_measured(df, "memcpy")
    return sec


def memcpy_figure(bw: pd.DataFrame, colors: dict[str, str] | None = None):
    """Bandwidth against copy size, a panel per direction: colour = card (the report's one colour
    per card), marker and line style = memory kind."""
    groups = [g for g in ("h2d", "d2h", "bidir", "d2d") if g in set(bw["op"])]
    if not groups:
        return None
    pyplot()
    fig, axes = panels(len(groups), 5.0, 3.3)
    cards = sorted(bw["card"].unique())
    variants = sorted(bw["variant"].unique())
    colors = colors_for(bw, colors)
    styles = {v: VARIANT_STYLES[i % len(VARIANT_STYLES)] for i, v in enumerate(variants)}
    titles = {
        "h2d": "host to device",
        "d2h": "device to host",
        "bidir": "both directions at once",
        "d2d": "device to device (bytes counted once)",
    }
    for ax, op in zip(axes, groups):
        sub = bw[bw["op"] == op]
        for (card, variant), line in sub.groupby(["card", "variant"]):
            line = line.sort_values("bytes")
            ls, marker = styles[variant]
            ax.plot(
                line["bytes"],
                line["median"],
                marker=marker,
                markersize=3,
                linestyle=ls,
                linewidth=1,
                color=colors[card],
                label=f"{card}: {variant}",
                gid=card_gid(card),
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        A.size_axis(ax, "x")
        A.si_axis(ax, "y")
        ax.set_xlabel("copy size")
        ax.set_ylabel("bandwidth (bytes/s)")
        ax.set_title(titles[op])
        ax.grid(True, which="both", alpha=0.3)
    key_legends(fig, {c: colors[c] for c in cards}, styles, "card", "memory")
    return fig
