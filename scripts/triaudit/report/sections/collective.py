"""Report sections of an NCCL collective (corners/collective.py; each collective's own corner names
it): bandwidth against message size (busbw, nccl-tests' definition; algbw on one rank), the largest
message's busbw and the smallest's latency per card; and the GPU-count sweep (`--scaling`): busbw
against GPU count with the parallel efficiency and the link model.

Names read: `<name>/<mode>/<type>/algo:<a>/bytes:<N>` (busbw, algbw, ranks, time_s) and
`<name>/scaling/<type>/algo:<a>/gpus:<g>/bytes:<N>` (ranks:<r> under MPI); context `<name>_link`.
"""

from __future__ import annotations

import math

import pandas as pd

from triaudit.core.palette import card_gid
from triaudit.core.specs import match_card
from triaudit.corners.base import Corner
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


def sections(rs: ResultSet, corner: Corner) -> list[Section]:
    return [bandwidth_section(rs, corner), scaling_section(rs, corner)]


def bandwidth_section(rs: ResultSet, corner: Corner) -> Section:
    df = rs.table
    name = corner.name
    sec = Section(name, f"Movement: {corner.collective}")
    bus = F.collective_rows(df, name, "busbw")
    alg = F.collective_rows(df, name, "algbw")
    if not alg.empty:
        ranks = F.metric(df, name, "ranks")[["file", "case", "median"]].rename(columns={"median": "ranks"})
        alg = alg.merge(ranks, on=["file", "case"], how="left")
        largest = alg[alg["bytes"] == alg.groupby(["card", *F.COLLECTIVE_KEY])["bytes"].transform("max")]
        b = bus.merge(largest[["file", "case"]], on=["file", "case"])
        if not b.empty:
            sec.tables.append(
                (
                    "Largest message: busbw (GB/s; nccl-tests' definition, 0 on one rank)",
                    F.pivot_cells(b, [*F.COLLECTIVE_KEY, "bytes"], lambda r: F.cell(r, 1e9), why=F.missing(df, name)),
                )
            )
        t = F.collective_rows(df, name, "time_s")
        small = t[t["bytes"] == t.groupby(["card", *F.COLLECTIVE_KEY])["bytes"].transform("min")]
        if not small.empty:
            sec.tables.append(
                (
                    "Smallest message: latency (µs)",
                    F.pivot_cells(
                        small, [*F.COLLECTIVE_KEY, "bytes"], lambda r: F.cell(r, 1e-6), why=F.missing(df, name)
                    ),
                )
            )
        multi = alg["ranks"].fillna(1).max() > 1
        fig, caption = bandwidth_figure(bus if multi else alg, multi, corner, card_colors(df))
        if fig is not None:
            sec.figures.append((f"{name}_bandwidth", caption, fig))
        sec.csv = alg[["card", "case", "op", "variant", "algo", "bytes", "ranks", "median", "spread_pct", "reps"]]
    sec.notes = not_measured(df, name)
    return sec


MODES = ("out_of_place", "in_place", "graph")


def bandwidth_figure(rows, multi: bool, corner: Corner, colors: dict[str, str] | None = None):
    """A panel per mode, one element type (fp32 where measured; the tables hold the others):
    colour = card, line style = NCCL algorithm. Returns (figure or None, caption)."""
    series, note = F.plotted(rows)
    series = series[series["op"].isin(MODES)] if not series.empty else series
    if series.empty:
        return None, ""
    types = sorted(series["variant"].unique())
    shown_type = "fp32" if "fp32" in types else types[0]
    series = series[series["variant"] == shown_type]
    pyplot()
    modes = [m for m in MODES if m in set(series["op"])]
    fig, axes = panels(len(modes), 3.33, 3.2, sharey=True)
    cards = sorted(series["card"].unique())
    colors = {c: v for c, v in colors_for(series, colors).items() if c in cards}
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
                gid=card_gid(card),
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
    caption = f"{corner.collective.capitalize()} bandwidth against message size, {shown_type}" + (
        f" ({', '.join(others)} in the tables and {corner.name}.csv)" if others else ""
    )
    return fig, caption + note


# --- scaling over GPU counts ---------------------------------------------------------------------


def scaling_frame(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """One row per scaling case: card, file, type, algo, gpus, bytes, busbw, algbw, time_s (medians)."""
    parts = []
    for metric in ("busbw", "algbw", "time_s"):
        m = F.metric(df, name, metric)
        m = m[m["op"] == "scaling"] if not m.empty else m
        if m.empty:
            continue
        parts.append(m.assign(**{metric: m["median"]}))
    if not parts or "busbw" not in parts[0]:
        return pd.DataFrame()
    base = parts[0]
    # gpus:<g> in one process, ranks:<r> under MPI; runs of both kinds may sit in one table.
    count = pd.Series(math.nan, index=base.index)
    for col in ("ranks", "gpus"):
        if col in base:
            count = pd.to_numeric(base[col], errors="coerce").fillna(count)
    out = base[["card", "run", "file", "case", "variant", "bytes", "busbw", "spread_pct"]].rename(
        columns={"variant": "type"}
    )
    out["gpus"] = count
    out["algo"] = base["algo"].fillna("not named") if "algo" in base else "not named"
    for p in parts[1:]:
        metric = [c for c in ("algbw", "time_s") if c in p][0]
        out = out.merge(p[["file", "case", metric]], on=["file", "case"], how="left")
    out["gpus"] = pd.to_numeric(out["gpus"], errors="coerce")
    out["bytes"] = pd.to_numeric(out["bytes"], errors="coerce")
    return out.dropna(subset=["gpus", "bytes"]).astype({"gpus": "int64", "bytes": "int64"})


def link_model(card: str, link: str | None) -> tuple[float, str] | None:
    """Per-GPU, per-direction bytes/s of the link the collective runs over (datasheet)."""
    spec = match_card(card)
    if spec is None or not link:
        return None
    if str(link).upper().startswith("NV") and spec.nvlink_gbps:
        g = spec.nvlink_gbps / 2
        return g * 1e9, f"NVLink {g:g} GB/s per direction ({spec.name} datasheet: {spec.nvlink_gbps:g} both ways)"
    if "PCI" in str(link).upper():
        g = spec.pcie_gbps_per_direction
        return g * 1e9, f"PCIe Gen{spec.pcie_gen} x{spec.pcie_width} {g:g} GB/s per direction (theoretical)"
    return None


def scaling_table(sc: pd.DataFrame, contexts: dict, link_key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (file, type, algo) at the largest size measured at every GPU count: busbw, algbw, time,
    efficiency against the smallest multi-GPU count (busbw should stay flat as GPUs are added: it is
    normalised to what each link carries) and against the link model. Returns (table, plotted rows)."""
    rows, keep = [], []
    for (f, typ, algo), g in sc.groupby(["file", "type", "algo"]):
        counts = sorted(g["gpus"].unique())
        common = set.intersection(*(set(g[g["gpus"] == c]["bytes"]) for c in counts))
        size = max(common) if common else None
        sel = (
            g[g["bytes"] == size] if size is not None else g[g["bytes"] == g.groupby("gpus")["bytes"].transform("max")]
        )
        ref = sel[sel["gpus"] >= 2].sort_values("gpus")
        ref_bw = ref["busbw"].iloc[0] if not ref.empty else math.nan
        ref_g = int(ref["gpus"].iloc[0]) if not ref.empty else None
        ctx = contexts.get(f, {})
        model = link_model(sel["card"].iloc[0], ctx.get(link_key))
        for r in sel.sort_values("gpus").itertuples():
            eff = r.busbw / ref_bw if r.gpus >= 2 and ref_bw and not math.isnan(ref_bw) else math.nan
            rows.append(
                {
                    "card": r.card,
                    "run": r.run,
                    "type": typ,
                    "algo": algo,
                    "GPUs": r.gpus,
                    "size": f"{r.bytes / 2**20:g} MiB",
                    "busbw GB/s": F.fmt(r.busbw, 1e9),
                    "algbw GB/s": F.fmt(getattr(r, "algbw", math.nan), 1e9) or "not recorded",
                    "time µs": F.fmt(getattr(r, "time_s", math.nan), 1e-6) or "not recorded",
                    "efficiency": "one GPU: no bus" if math.isnan(eff) else f"{eff * 100:.0f} % of {ref_g} GPUs",
                    "of link model": "no link model"
                    if model is None
                    else "one GPU: no bus"
                    if r.gpus < 2
                    else f"{r.busbw / model[0] * 100:.0f} %",
                    "link model": "not known for this card and link" if model is None else model[1],
                }
            )
        keep.append(sel.assign(model=model[0] if model else math.nan))
    t = pd.DataFrame(rows)
    if t.empty:
        return t, pd.DataFrame()
    return t.set_index(["card", "run", "type", "algo", "GPUs"]), pd.concat(keep)


def scaling_figure(plotted: pd.DataFrame, title: str, colors: dict[str, str] | None = None):
    """busbw against GPU count: colour = card, marker and line style = type and algorithm."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = colors_for(plotted, colors)
    series = sorted({(t, a) for t, a in zip(plotted["type"], plotted["algo"])})
    styles = {k: VARIANT_STYLES[i % len(VARIANT_STYLES)] for i, k in enumerate(series)}
    for (card, run, typ, algo), line in plotted.groupby(["card", "run", "type", "algo"]):
        line = line.sort_values("gpus")
        ls, marker = styles[(typ, algo)]
        ax.plot(
            line["gpus"],
            line["busbw"] / 1e9,
            marker=marker,
            linestyle=ls,
            color=colors[card],
            label=f"{card} ({run}): {typ} {algo}",
            gid=card_gid(card),
        )
        m = line["model"].iloc[0]
        if not math.isnan(m):
            ax.axhline(m / 1e9, color=colors[card], linestyle=(0, (1, 2)), linewidth=1, gid=card_gid(card))
    counts = sorted(plotted["gpus"].unique())
    ax.set_xticks(counts)
    ax.set_xlabel("GPUs")
    ax.set_ylabel("busbw (GB/s; flat = adding GPUs keeps each link's speed)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{title.capitalize()} scaling (dotted: the link model, datasheet per direction)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.set_layout_engine("tight")  # laid out as it is drawn
    return fig


def scaling_section(rs: ResultSet, corner: Corner) -> Section:
    df = rs.table
    name = corner.name
    sec = Section(f"{name}_scaling", f"Movement: {corner.collective} scaling over GPU counts")
    if df.empty or "corner" not in df:
        return sec
    sc = scaling_frame(df, name)
    if not sc.empty:
        t, plotted = scaling_table(sc, rs.contexts, f"{name}_link")
        if not t.empty:
            sec.tables.append(
                (
                    "busbw by GPU count at the largest size measured at every count; efficiency = busbw ÷ "
                    "busbw at the fewest GPUs (≥ 2), of link model = busbw ÷ the link's datasheet rate per "
                    "direction (one GPU: a local reduction, busbw 0 by definition)",
                    t,
                )
            )
            sec.figures.append(
                (
                    f"{name}_scaling",
                    "busbw against GPU count per card",
                    scaling_figure(plotted, corner.collective, card_colors(df)),
                )
            )
        sec.csv = sc
    sec.notes = [n for n in not_measured(df, name) if "/scaling/" in n]
    return sec
