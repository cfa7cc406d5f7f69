"""Report section "Movement: NCCL allreduce" (triaudit_allreduce)."""

from __future__ import annotations

from triaudit.report import frames as F
from triaudit.report.section import Section, legend_beside, not_measured, pyplot
from triaudit.results.table import ResultSet


def allreduce_section(rs: ResultSet) -> Section:
    df = rs.table
    sec = Section("allreduce", "Movement: allreduce")
    bus = F.allreduce_rows(df, "busbw")
    alg = F.allreduce_rows(df, "algbw")
    if not alg.empty:
        ranks = F.metric(df, "allreduce", "ranks")[["file", "case", "median"]].rename(columns={"median": "ranks"})
        alg = alg.merge(ranks, on=["file", "case"], how="left")
        largest = alg[alg["bytes"] == alg.groupby(["card", *F.ALLREDUCE_KEY])["bytes"].transform("max")]
        b = bus.merge(largest[["file", "case"]], on=["file", "case"])
        if not b.empty:
            sec.tables.append(
                (
                    "Largest message: busbw (GB/s; nccl-tests' definition, 0 on one rank)",
                    F.pivot_cells(b, [*F.ALLREDUCE_KEY, "bytes"], lambda r: F.cell(r, 1e9, 1)),
                )
            )
        t = F.allreduce_rows(df, "time_s")
        small = t[t["bytes"] == t.groupby(["card", *F.ALLREDUCE_KEY])["bytes"].transform("min")]
        if not small.empty:
            sec.tables.append(
                (
                    "Smallest message: latency (µs)",
                    F.pivot_cells(small, [*F.ALLREDUCE_KEY, "bytes"], lambda r: F.cell(r, 1e-6, 1)),
                )
            )
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        multi = alg["ranks"].fillna(1).max() > 1
        series, note = F.plotted(bus if multi else alg)
        for (card, op, variant, algo), line in series.groupby(["card", *F.ALLREDUCE_KEY]):
            line = line.sort_values("bytes")
            label = f"{card}: {op} {variant}" + (f" algo:{algo}" if algo else "")
            ax.plot(line["bytes"], line["median"] / 1e9, marker="o", markersize=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size per rank (bytes)")
        ax.set_ylabel(("busbw" if multi else "algbw (one rank: busbw is 0)") + " (GB/s)")
        ax.set_title("NCCL allreduce")
        ax.grid(True, which="both", alpha=0.3)
        legend_beside(fig, ax)
        fig.set_layout_engine("tight")  # laid out as it is drawn
        sec.figures.append(("allreduce_bandwidth", "Allreduce bandwidth against message size" + note, fig))
        sec.csv = alg[["card", "case", "op", "variant", "algo", "bytes", "ranks", "median", "spread_pct", "reps"]]
    sec.notes = not_measured(df, "allreduce")
    return sec
