"""Report section "Movement: host and device copies" (triaudit_memcpy)."""

from __future__ import annotations

import pandas as pd

from triaudit.report import frames as F
from triaudit.report.section import Section, not_measured, pyplot
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
                F.pivot_cells(largest, ["op", "variant"], lambda r: F.cell(r, 1e9, 1, frac(r))),
            )
        )
        lat = F.with_int(F.metric(df, "memcpy", "seconds_per_op"), "bytes")
        small = lat[lat["bytes"] == lat.groupby(["card", "op", "variant"])["bytes"].transform("min")]
        if not small.empty:
            sec.tables.append(
                (
                    "Smallest size: time per copy (µs)",
                    F.pivot_cells(small, ["op", "variant", "bytes"], lambda r: F.cell(r, 1e-6, 1)),
                )
            )
        drawn, note = F.plotted(bw)
        fig = memcpy_figure(drawn)
        if fig is not None:
            sec.figures.append(
                ("memcpy_bandwidth", "Copy bandwidth against size: pinned vs pageable and the rest" + note, fig)
            )
        sec.csv = bw[["card", "case", "op", "variant", "bytes", "median", "spread_pct", "reps"]]
    ov = F.metric(df, "memcpy", "hidden_fraction")
    if not ov.empty:
        sec.tables.append(
            (
                "Copy/compute overlap: fraction of the copy hidden behind a kernel of equal length",
                F.pivot_cells(F.with_int(ov, "bytes"), ["variant", "bytes"], lambda r: f"{r['median']:.2f}"),
            )
        )
    sec.notes = not_measured(df, "memcpy")
    return sec


def memcpy_figure(bw: pd.DataFrame):
    plt = pyplot()
    groups = [g for g in ("h2d", "d2h", "bidir", "d2d") if g in set(bw["op"])]
    if not groups:
        return None
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 4.2), squeeze=False, sharey=True)
    for ax, op in zip(axes[0], groups):
        sub = bw[bw["op"] == op]
        for (card, variant), line in sub.groupby(["card", "variant"]):
            line = line.sort_values("bytes")
            ax.plot(line["bytes"], line["median"] / 1e9, marker="o", markersize=3, label=f"{card}: {variant}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("copy size (bytes)")
        ax.set_ylabel("bandwidth (GB/s)")
        ax.set_title(f"{op}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.set_layout_engine("tight")  # laid out as it is drawn
    return fig
