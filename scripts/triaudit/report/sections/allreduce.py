"""Report section "Movement: NCCL allreduce" (triaudit_allreduce)."""

from __future__ import annotations

from triaudit.report import axes as A
from triaudit.report import frames as F
from triaudit.report.section import VARIANT_STYLES, Section, key_legends, not_measured, panels, pyplot
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
                    F.pivot_cells(
                        b, [*F.ALLREDUCE_KEY, "bytes"], lambda r: F.cell(r, 1e9), why=F.missing(df, "allreduce")
                    ),
                )
            )
        t = F.allreduce_rows(df, "time_s")
        small = t[t["bytes"] == t.groupby(["card", *F.ALLREDUCE_KEY])["bytes"].transform("min")]
        if not small.empty:
            sec.tables.append(
                (
                    "Smallest message: latency (µs)",
                    F.pivot_cells(
                        small, [*F.ALLREDUCE_KEY, "bytes"], lambda r: F.cell(r, 1e-6), why=F.missing(df, "allreduce")
                    ),
                )
            )
        multi = alg["ranks"].fillna(1).max() > 1
        fig, caption = allreduce_figure(bus if multi else alg, multi)
        if fig is not None:
            sec.figures.append(("allreduce_bandwidth", caption, fig))
        sec.csv = alg[["card", "case", "op", "variant", "algo", "bytes", "ranks", "median", "spread_pct", "reps"]]
    sec.notes = not_measured(df, "allreduce")
    return sec


MODES = ("out_of_place", "in_place", "graph")


def allreduce_figure(rows, multi: bool):
    """A panel per mode, one element type (fp32 where measured; the tables hold the others):
    colour = card, line style = NCCL algorithm. Returns (figure or None, caption)."""
    series, note = F.plotted(rows)
    series = series[series["op"].isin(MODES)] if not series.empty else series
    if series.empty:
        return None, ""
    types = sorted(series["variant"].unique())
    shown_type = "fp32" if "fp32" in types else types[0]
    series = series[series["variant"] == shown_type]
    plt = pyplot()
    modes = [m for m in MODES if m in set(series["op"])]
    fig, axes = panels(len(modes), 3.33, 3.2, sharey=True)
    cards = sorted(series["card"].unique())
    colors = dict(zip(cards, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    algos = sorted(a for a in series["algo"].dropna().unique()) or [""]
    styles = {a or "(one)": VARIANT_STYLES[i % len(VARIANT_STYLES)] for i, a in enumerate(algos)}
    for ax, mode in zip(axes, modes):
        sub = series[series["op"] == mode]
        for (card, algo), line in sub.groupby(["card", "algo"], dropna=False):
            line = line.sort_values("bytes")
            ls, marker = styles.get(algo or "(one)", VARIANT_STYLES[0])
            label = f"{card}: {mode} {shown_type}" + (f" algo:{algo}" if algo else "")
            ax.plot(
                line["bytes"],
                line["median"],
                marker=marker,
                markersize=3,
                linestyle=ls,
                color=colors[card],
                label=label,
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        A.size_axis(ax, "x")
        A.si_axis(ax, "y")
        ax.set_xlabel("message size per rank")
        ax.set_ylabel(("busbw" if multi else "algbw (one rank: busbw is 0)") + " (bytes/s)")
        ax.set_title(mode.replace("_", " "))
        ax.grid(True, which="both", alpha=0.3)
    key_legends(fig, colors, {f"algo:{a}": s for a, s in styles.items()}, "card", "NCCL algorithm")
    others = [t for t in types if t != shown_type]
    caption = f"Allreduce bandwidth against message size, {shown_type}" + (
        f" ({', '.join(others)} in the tables and allreduce.csv)" if others else ""
    )
    return fig, caption + note
