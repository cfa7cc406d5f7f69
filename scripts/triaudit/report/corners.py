"""Report sections per corner: tables with cards as columns, plots. Each section is data
(tables, figures, notes), rendered to Markdown, CSV and HTML by report.py."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from triaudit.report import cost as cost_report
from triaudit.report import energy as energy_report
from triaudit.report import fleet as fleet_report
from triaudit.report import frames as F
from triaudit.report import p2p as p2p_report
from triaudit.report import peers as peer_report
from triaudit.report import stream as stream_report
from triaudit.results.table import card_contexts, plain


@dataclass
class Section:
    key: str
    title: str
    tables: list = field(default_factory=list)  # (caption, DataFrame with cards as columns)
    figures: list = field(default_factory=list)  # (file stem, caption, matplotlib figure)
    csv: pd.DataFrame | None = None
    notes: list = field(default_factory=list)


def _legend_beside(fig, ax, inside: int = 8) -> None:
    """A legend of up to `inside` entries on the axes; a longer one beside them (the figure made
    wider), where it covers no data."""
    n = len(ax.get_legend_handles_labels()[1])
    if n <= inside:
        ax.legend(fontsize=7)
        return
    ncol = 1 + (n - 1) // 24
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, ncol=ncol)
    w, h = fig.get_size_inches()
    fig.set_size_inches(w + 2.8 * ncol, h)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _not_measured(df: pd.DataFrame, corner: str) -> list[str]:
    s = plain(df[(df["corner"] == corner) & (df["status"] != "ok")]) if not df.empty else df
    out = []
    for (card, status), g in s.groupby(["card", "status"]):
        out.append(f"{card}: {len(g)} case(s) {status}, e.g. `{g['case'].iloc[0]}`: {g['message'].iloc[0]}")
    return out


# --- bandwidth --------------------------------------------------------------------------------


def stream_section(df: pd.DataFrame) -> Section:
    sec = Section("stream", "Bandwidth: STREAM")
    s = stream_report.stream_frame(df)
    if not s.empty:
        hbm = stream_report.hbm_table(s)
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
        l2 = stream_report.l2_table(s, card_contexts(df))
        if not l2.empty:
            sec.tables.append(("L2-resident: best hot bandwidth (GB/s)", l2))
        drawn, note = F.plotted(df)
        fig = stream_report.plot_figure(drawn)
        if fig is not None:
            sec.figures.append(("stream_bandwidth", "STREAM bandwidth against working-set size" + note, fig))
        sec.csv = stream_report.csv_table(df)
    sec.notes = _not_measured(df, "stream")
    return sec


# --- compute ----------------------------------------------------------------------------------


def _gemm_rate(df: pd.DataFrame) -> pd.DataFrame:
    rows = pd.concat([F.metric(df, "gemm", "flops"), F.metric(df, "gemm", "ops")])
    for col in ("m", "n", "k"):  # ceiling and LLM cases carry no m:/n:/k: in their names
        if col not in rows:
            rows[col] = math.nan
    return F.with_int(rows, "m", "n", "k")


def _library(g: pd.DataFrame) -> pd.DataFrame:
    """cuBLASLt cases and the ceiling sweep: what defines a card's compute roof (not the ladder)."""
    return g[g["op"].isin(["cublaslt", "ceiling"])] if not g.empty else g


def gemm_section(df: pd.DataFrame) -> Section:
    sec = Section("gemm", "Compute: GEMM")
    g = _gemm_rate(df)
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
                    F.pivot_cells(ceil, ["variant", "mode"], lambda r: F.cell(r, 1e12, 1, frac(r))),
                )
            )
        lt = g[g["op"].isin(["cublaslt", "torch"]) & (g["m"] == 8192) & (g["n"] == 8192) & (g["k"] == 8192)]
        if not lt.empty:
            sec.tables.append(
                (
                    "cuBLASLt (and torch.matmul where measured) at 8192³ (TFLOP/s, % of datasheet)",
                    F.pivot_cells(lt, ["op", "variant", "layout"], lambda r: F.cell(r, 1e12, 1, frac(r))),
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
                            F.fmt(r["median"], 1e12, 1)
                            + (f" (×{r['ratio']:.2f})" if not math.isnan(r["ratio"]) else "")
                        ),
                    ),
                )
            )
        drawn, note = F.plotted(_library(g))
        fig = gemm_figure(drawn)
        if fig is not None:
            sec.figures.append(
                ("gemm_by_precision", "Best GEMM throughput per precision beside the datasheet peak" + note, fig)
            )
        sec.csv = g[
            ["card", "case", "op", "variant", "layout", "m", "n", "k", "metric", "median", "spread_pct", "reps"]
            if "layout" in g
            else ["card", "case", "median"]
        ]
    sec.notes = _not_measured(df, "gemm")
    return sec


def gemm_figure(g: pd.DataFrame):
    plt = _plt()
    best = g.groupby(["card", "variant"])["median"].max().reset_index()
    if best.empty:
        return None
    cards = sorted(best["card"].unique())
    precs = [p for p in F.SPEC_PRECISION if p in set(best["variant"])]
    fig, ax = plt.subplots(figsize=(max(7, 1.3 * len(precs) * len(cards)), 4.5))
    width = 0.8 / max(1, len(cards))
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
        ax.bar(xs, ys, width=width, label=f"{card}: measured")
        ax.scatter(xs, peaks, marker="_", s=400, color="black", zorder=3, label="datasheet peak" if ci == 0 else None)
    ax.set_xticks([i + width * (len(cards) - 1) / 2 for i in range(len(precs))], precs)
    ax.set_ylabel("TFLOP/s (TOP/s for int8)")
    ax.set_yscale("log")
    ax.set_title("GEMM: best measured throughput per precision")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.set_layout_engine("tight")  # laid out as it is drawn
    return fig


def roofline_figure(df: pd.DataFrame):
    """Per card: measured compute roofs (ceiling sweep, else best GEMM) per precision, the
    measured HBM slope (largest cold STREAM case), ridge points, GEMM cases by intensity."""
    plt = _plt()
    g = _library(_gemm_rate(df))
    s = stream_report.stream_frame(df)
    if g.empty or s.empty:
        return None
    cards = sorted(set(g["card"]) & set(s["card"]))
    if not cards:
        return None
    ai = F.metric(df, "gemm", "arithmetic_intensity")[["file", "case", "median"]].rename(columns={"median": "ai"})
    fig, axes = plt.subplots(1, len(cards), figsize=(7 * len(cards), 5), squeeze=False)
    for ax, card in zip(axes[0], cards):
        cold = s[(s["card"] == card) & (s["cache"] == "cold")]
        bw = cold[cold["bytes"] == cold["bytes"].max()]["median"].max()
        gc = g[g["card"] == card]
        roofs = gc.groupby("variant")["median"].max()
        top = roofs.max() / bw  # the slope ends where the highest roof begins
        ax.plot([0.1, top], [bw * 0.1, bw * top], color="black", label=f"HBM {bw / 1e9:.0f} GB/s (measured)")
        pts = gc[gc["op"] == "cublaslt"].merge(ai, on=["file", "case"], how="left")
        for i, (prec, roof) in enumerate(roofs.items()):
            color = f"C{i}"
            ridge = roof / bw
            ax.plot([ridge, 1e5], [roof, roof], color=color, linestyle="--", linewidth=1)
            ax.plot([ridge], [roof], marker="o", color=color)
            ax.annotate(
                f"{prec}: {roof / 1e12:.0f} T, ridge {ridge:.0f} FLOP/B",
                (ridge, roof),
                fontsize=7,
                xytext=(4, 4),
                textcoords="offset points",
                color=color,
            )
            p = pts[pts["variant"] == prec]
            ax.scatter(p["ai"], p["median"], s=10, color=color, alpha=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("FLOP/s")
        ax.set_title(f"Measured roofline: {card}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.set_layout_engine("tight")  # laid out as it is drawn
    return fig


# --- movement ---------------------------------------------------------------------------------


def memcpy_section(df: pd.DataFrame) -> Section:
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
    sec.notes = _not_measured(df, "memcpy")
    return sec


def memcpy_figure(bw: pd.DataFrame):
    plt = _plt()
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


def launch_section(df: pd.DataFrame) -> Section:
    sec = Section("launch", "Movement: launch cost")
    t = F.metric(df, "launch", "time_s")
    if not t.empty:
        simple = t[t["op"].isin(["empty", "sync"])]
        if not simple.empty:
            sec.tables.append(
                ("Per operation (µs)", F.pivot_cells(simple, ["op", "variant"], lambda r: F.cell(r, 1e-6, 2)))
            )
        fus = F.with_int(t[t["op"] == "fusion"], "steps", "bytes")
        if not fus.empty:
            sec.tables.append(
                (
                    "Fusion: time per chain (µs)",
                    F.pivot_cells(fus, ["steps", "bytes", "variant"], lambda r: F.cell(r, 1e-6, 1)),
                )
            )
    fit = pd.concat([F.metric(df, "launch", "per_kernel_s"), F.metric(df, "launch", "fixed_s")])
    fit = fit[fit["op"] == "chain_fit"] if not fit.empty else fit
    if not fit.empty:
        fit = fit.assign(what=fit["metric"].map({"per_kernel_s": "per kernel", "fixed_s": "fixed"}))
        sec.tables.append(
            (
                "Chains of 1–1000 empty kernels, line fit (µs)",
                F.pivot_cells(fit, ["variant", "what"], lambda r: F.fmt(r["median"], 1e-6, 2)),
            )
        )
    chain = F.with_int(F.metric(df, "launch", "per_kernel_s"), "kernels")
    chain = chain[chain["op"] == "chain"] if not chain.empty else chain
    if not chain.empty:
        plt = _plt()
        fig, ax = plt.subplots(figsize=(7, 4.2))
        drawn, note = F.plotted(chain)
        for (card, variant), line in drawn.groupby(["card", "variant"]):
            line = line.sort_values("kernels")
            ax.plot(line["kernels"], line["median"] * 1e6, marker="o", label=f"{card}: {variant}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("kernels in the chain")
        ax.set_ylabel("time per kernel (µs, launch to completion)")
        ax.set_title("Launch cost: eager vs CUDA Graph")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.set_layout_engine("tight")  # laid out as it is drawn
        sec.figures.append(("launch_eager_vs_graph", "Per-kernel cost of a chain, eager vs graph" + note, fig))
    sec.csv = t[["card", "case", "op", "variant", "median", "spread_pct", "reps"]] if not t.empty else None
    sec.notes = _not_measured(df, "launch")
    return sec


def allreduce_section(df: pd.DataFrame) -> Section:
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
        plt = _plt()
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
        _legend_beside(fig, ax)
        fig.set_layout_engine("tight")  # laid out as it is drawn
        sec.figures.append(("allreduce_bandwidth", "Allreduce bandwidth against message size" + note, fig))
        sec.csv = alg[["card", "case", "op", "variant", "algo", "bytes", "ranks", "median", "spread_pct", "reps"]]
    sec.notes = _not_measured(df, "allreduce")
    return sec


def published_section(df: pd.DataFrame) -> Section:
    from triaudit.report.published import comparison_table

    sec = Section("published", "Against published measurements")
    t = comparison_table(df)
    if not t.empty:
        sec.tables.append(
            (
                "This run beside other tools' published figures for the same card, each side's statistic "
                "named (a ratio far from 1 is a question to answer, not a verdict)",
                t,
            )
        )
        sec.csv = t.reset_index()
    return sec


def all_sections(df: pd.DataFrame, prices=None) -> list[Section]:
    secs = [
        stream_section(df),
        gemm_section(df),
        memcpy_section(df),
        launch_section(df),
        allreduce_section(df),
        published_section(df),
    ]
    secs.append(fleet_report.fleet_section(df))  # whole-node runs: every GPU against its siblings
    secs.append(peer_report.peer_section(df))  # imported peer tools beside triaudit (triaudit import)
    secs += p2p_report.sections(df)  # GPU x GPU copy matrices, allreduce scaling over GPU counts
    secs.append(energy_report.energy_section(df))  # burst vs sustained, power, perf per watt
    secs += [cost_report.cost_section(df, prices)] if prices is not None else []  # report --prices
    drawn, note = F.plotted(df)
    fig = roofline_figure(drawn)
    if fig is not None:
        secs[1].figures.insert(0, ("roofline", "Measured roofline per card" + note, fig))
    return secs
