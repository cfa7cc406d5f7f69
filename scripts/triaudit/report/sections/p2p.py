"""Report section of the GPU-to-GPU corner (`triaudit_p2p`): a matrix per test with a SUM line, a
heatmap per test on one fixed colour scale, the pairs that fall below 80 % of the median of their
link type.

Names read (DESIGN.md's contract, issue #15):
  p2p/<ce|ce_read|sm_read|sm_write>/<uni|bidir>/src:<i>/dst:<j>/bytes:<N>  bytes_per_second (src->dst), bidir also
                                                                    bytes_per_second_total
  p2p/staged/uni/src:<i>/dst:<j>/bytes:<N>                          peer access off, through host memory
  p2p/small_copy/<ce|sm_write>/src:<i>/dst:<j>/bytes:<N>            seconds_per_op (p2p/latency/... before schema 2)
Context: p2p_link_<i>_<j> (NV<k>, PIX, ..., SYS), p2p_access_<i>_<j>.
"""

from __future__ import annotations

import math

import pandas as pd

from triaudit.report import frames as F
from triaudit.report.section import Section, panels, pyplot
from triaudit.results.table import ResultSet, plain

TEST_ORDER = [
    ("ce", "uni"),
    ("ce", "bidir"),
    ("ce_read", "uni"),
    ("ce_read", "bidir"),
    ("sm_read", "uni"),
    ("sm_read", "bidir"),
    ("sm_write", "uni"),
    ("sm_write", "bidir"),
    ("staged", "uni"),
]
# One colour scale for every run: a log scale from PCIe-through-the-host rates to NVLink 5's per
# direction, so the same colour means the same GB/s in any two reports.
HEATMAP_GBPS = (1.0, 1000.0)
LOW_FRACTION = 0.8


def _new_section(key: str, title: str):
    return Section(key, title)


def _label_files(rows: pd.DataFrame) -> dict[str, str]:
    """file -> a label: the card, with the run where one card has several runs."""
    out = {}
    for card, g in rows.groupby("card"):
        files = sorted(g["file"].unique())
        for f in files:
            run = g.loc[g["file"] == f, "run"].iloc[0]
            out[f] = card if len(files) == 1 else f"{card} ({run})"
    return out


def _not_measured(df: pd.DataFrame, corner: str, op=None) -> list[str]:
    s = plain(df[(df["corner"] == corner) & (df["status"] != "ok")])
    if op is not None:
        s = s[s["op"].isin(op) if isinstance(op, (list, set, tuple)) else s["op"] == op]
    return [
        f"{card}: {len(g)} case(s) {status}, e.g. `{g['case'].iloc[0]}`: {g['message'].iloc[0]}"
        for (card, status), g in s.groupby(["card", "status"])
    ]


# --- GPU-to-GPU copies ---------------------------------------------------------------------------


def link_of(ctx: dict, i: int, j: int) -> str:
    v = ctx.get(f"p2p_link_{i}_{j}") or ctx.get(f"p2p_link_{j}_{i}")
    return str(v) if v else "unknown"


def p2p_frame(df: pd.DataFrame, contexts: dict[str, dict]) -> pd.DataFrame:
    """One row per (file, test, src, dst, bytes) with the median bytes/s and the pair's link."""
    bw = F.with_int(F.metric(df, "p2p", "bytes_per_second"), "src", "dst", "bytes")
    if bw.empty:
        return bw
    bw = bw[bw["op"] != "small_copy"].dropna(subset=["src", "dst", "bytes"]).copy()
    for c in ("src", "dst", "bytes"):
        bw[c] = bw[c].astype("int64")
    bw["link"] = [link_of(contexts.get(f, {}), s, d) for f, s, d in zip(bw["file"], bw["src"], bw["dst"])]
    bw["test"] = bw["op"] + " " + bw["variant"]
    return bw


def largest_size(bw: pd.DataFrame) -> pd.DataFrame:
    """Each (file, test) at the largest size measured in it."""
    return bw[bw["bytes"] == bw.groupby(["file", "test"])["bytes"].transform("max")].copy()


def flag_low(big: pd.DataFrame) -> pd.DataFrame:
    """Adds link_median and low: a pair below 80 % of the median of the pairs with its link type
    (same file, same test). Pairs of a link type alone are compared with nothing and never low."""
    big = big.copy()
    big["link_median"] = big.groupby(["file", "test", "link"])["median"].transform("median")
    big["pairs_of_link"] = big.groupby(["file", "test", "link"])["median"].transform("size")
    big["low"] = (big["median"] < LOW_FRACTION * big["link_median"]) & (big["pairs_of_link"] > 1)
    return big


def matrix_table(rows: pd.DataFrame, n: int) -> pd.DataFrame:
    """src x dst in GB/s with a 'total' column (what each GPU sends) and a SUM row (what each
    receives); the corner is the sum over all pairs, nvbandwidth's SUM."""
    vals = rows.pivot_table(index="src", columns="dst", values="median", aggfunc="first")
    low = rows.pivot_table(index="src", columns="dst", values="low", aggfunc="first")
    idx = list(range(n))
    vals = vals.reindex(index=idx, columns=idx)
    low = low.reindex(index=idx, columns=idx)
    t = pd.DataFrame(
        index=[f"GPU{i}" for i in idx] + ["SUM"], columns=[f"GPU{j}" for j in idx] + ["total"], dtype=object
    )
    for i in idx:
        for j in idx:
            v, flag = vals.loc[i, j], low.loc[i, j]
            star = "*" if not pd.isna(flag) and bool(flag) else ""
            t.loc[f"GPU{i}", f"GPU{j}"] = "—" if i == j else (F.NOT_RUN if pd.isna(v) else F.fmt(v, 1e9) + star)
        t.loc[f"GPU{i}", "total"] = F.fmt(vals.loc[i].sum(skipna=True), 1e9)
    for j in idx:
        t.loc["SUM", f"GPU{j}"] = F.fmt(vals[j].sum(skipna=True), 1e9)
    t.loc["SUM", "total"] = F.fmt(vals.sum(skipna=True).sum(), 1e9)
    t.index.name = "src \\ dst"
    return t


def _gpu_count(ctx: dict, rows: pd.DataFrame) -> int:
    try:
        return int(ctx.get("p2p_gpu_count"))
    except (TypeError, ValueError):
        return int(max(rows["src"].max(), rows["dst"].max())) + 1


def links_table(ctx: dict, n: int) -> pd.DataFrame:
    """The run's own link and peer-access matrix (context), as NCCL and CUDA saw it."""
    t = pd.DataFrame(index=[f"GPU{i}" for i in range(n)], columns=[f"GPU{j}" for j in range(n)], dtype=object)
    for i in range(n):
        for j in range(n):
            if i == j:
                t.iloc[i, j] = "X"
                continue
            access = str(ctx.get(f"p2p_access_{i}_{j}", ""))
            t.iloc[i, j] = link_of(ctx, i, j) + ("" if access in ("", "yes") else f" (peer access {access})")
    for i in range(n):
        extra = [f"NUMA {ctx[k]}" for k in (f"gpu_{i}_numa_node",) if ctx.get(k) not in (None, "")]
        extra += [f"CPUs {ctx[k]}" for k in (f"gpu_{i}_cpu_affinity",) if ctx.get(k) not in (None, "")]
        extra += [f"NVLink {ctx[k]} up" for k in (f"gpu_{i}_nvlink_links",) if ctx.get(k) not in (None, "")]
        t.loc[f"GPU{i}", "GPU"] = ctx.get(f"gpu_{i}_name", "")
        t.loc[f"GPU{i}", "NUMA / CPUs / NVLink"] = ", ".join(extra) or "not in the run's context"
    t.index.name = "link"
    return t


def heatmap_figure(big: pd.DataFrame, test: str, labels: dict[str, str], contexts: dict):
    plt = pyplot()
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    sub = big[big["test"] == test]
    files = [f for f in labels if f in set(sub["file"])]
    if not files:
        return None
    fig, flat = panels(len(files), 4.8, 4.4)
    cmap = plt.get_cmap("viridis").with_extremes(bad="#dddddd", over="#fde725", under="#30123b")
    norm = LogNorm(*HEATMAP_GBPS)
    im = None
    for ax, f in zip(flat, files):
        rows = sub[sub["file"] == f]
        n = _gpu_count(contexts.get(f, {}), rows)
        grid = [[math.nan] * n for _ in range(n)]
        for r in rows.itertuples():
            if r.src < n and r.dst < n and r.src != r.dst:
                grid[r.src][r.dst] = r.median / 1e9
        im = ax.imshow(grid, norm=norm, cmap=cmap)
        for r in rows.itertuples():
            if r.src >= n or r.dst >= n or r.src == r.dst:
                continue
            v = r.median / 1e9
            ax.text(
                r.dst,
                r.src,
                f"{v:.0f}" if v >= 10 else f"{v:.1f}",
                ha="center",
                va="center",
                fontsize=7 if n <= 8 else 6,
                color="white" if v < 100 else "black",
            )
            if r.low:
                ax.add_patch(Rectangle((r.dst - 0.5, r.src - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xlabel("destination GPU")
        ax.set_ylabel("source GPU")
        size = int(rows["bytes"].max())
        ax.set_title(f"{labels[f]}\n{size / 2**20:g} MiB per copy", fontsize=9)
    fig.suptitle(f"GPU→GPU {test} (GB/s; red box: below 80 % of its link type's median)", fontsize=10)
    cbar = fig.colorbar(im, ax=flat, extend="both")
    cbar.set_label(f"GB/s, fixed log scale {HEATMAP_GBPS[0]:g}–{HEATMAP_GBPS[1]:g} for every run")
    return fig


def p2p_section(rs: ResultSet):
    df, contexts = rs.table, rs.contexts
    sec = _new_section("p2p", "Movement: GPU to GPU")
    if df.empty or "corner" not in df:
        return sec
    bw = p2p_frame(df, contexts)
    if not bw.empty:
        big = flag_low(largest_size(bw))
        labels = _label_files(big)
        tests = [f"{o} {v}" for o, v in TEST_ORDER if f"{o} {v}" in set(big["test"])]
        tests += sorted(set(big["test"]) - set(tests))
        for f, label in labels.items():
            ctx = contexts.get(f, {})
            rows_f = big[big["file"] == f]
            n = _gpu_count(ctx, rows_f)
            if any(k.startswith("p2p_link_") for k in ctx):
                sec.tables.append(
                    (f"{label}: links and peer access between the GPUs (from the run's context)", links_table(ctx, n))
                )
            for test in tests:
                rows = rows_f[rows_f["test"] == test]
                if rows.empty:
                    continue
                size = int(rows["bytes"].max())
                what = "per direction, both directions running" if test.endswith("bidir") else "one direction at a time"
                sec.tables.append(
                    (
                        f"{label}: {test} (GB/s {what}, {size / 2**20:g} MiB copies; row = source, column = "
                        f"destination; SUM = all pairs, as nvbandwidth's; * = below 80 % of the median of its "
                        "link type)",
                        matrix_table(rows, n),
                    )
                )
        low = big[big["low"]]
        if not low.empty:
            t = pd.DataFrame(
                {
                    "run": low["file"].map(labels),
                    "test": low["test"],
                    "src": low["src"],
                    "dst": low["dst"],
                    "link": low["link"],
                    "GB/s": (low["median"] / 1e9).round(1),
                    "median of link type": (low["link_median"] / 1e9).round(1),
                    "% of median": (100 * low["median"] / low["link_median"]).round(0).astype(int),
                }
            )
            sec.tables.append(
                (
                    "Pairs below 80 % of the median of their link type (same run, same test)",
                    t.set_index(["run", "test", "src", "dst"]).sort_index(),
                )
            )
        for test in tests:
            fig = heatmap_figure(big, test, labels, contexts)
            if fig is not None:
                sec.figures.append(
                    (f"p2p_heatmap_{test.replace(' ', '_')}", f"GPU→GPU {test}: heatmap on a fixed colour scale", fig)
                )
        sec.csv = big[
            [
                "card",
                "run",
                "case",
                "test",
                "src",
                "dst",
                "link",
                "bytes",
                "median",
                "link_median",
                "low",
                "spread_pct",
                "reps",
            ]
        ]
    lat = F.with_int(F.metric(df, "p2p", "seconds_per_op"), "src", "dst", "bytes")
    lat = lat[lat["op"] == "small_copy"].dropna(subset=["src", "dst", "bytes"]) if not lat.empty else lat
    if not lat.empty:
        small = lat[lat["bytes"] == lat.groupby(["file", "variant"])["bytes"].transform("min")]
        for f, label in _label_files(small).items():
            for variant, rows in small[small["file"] == f].groupby("variant"):
                n = _gpu_count(contexts.get(f, {}), rows.astype({"src": "int64", "dst": "int64"}))
                t = pd.DataFrame(
                    F.NOT_RUN, index=[f"GPU{i}" for i in range(n)], columns=[f"GPU{j}" for j in range(n)], dtype=object
                )
                for r in rows.itertuples():
                    t.loc[f"GPU{int(r.src)}", f"GPU{int(r.dst)}"] = F.fmt(r.median, 1e-6)
                for i in range(n):
                    t.loc[f"GPU{i}", f"GPU{i}"] = "—"
                t.index.name = "src \\ dst"
                sec.tables.append(
                    (
                        f"{label}: time per copy, {variant}, {int(rows['bytes'].min())} B copies back to back "
                        "(µs; row = source, column = destination)",
                        t,
                    )
                )
    sec.notes = _not_measured(df, "p2p")
    return sec


def sections(rs: ResultSet, corner=None) -> list:
    return [p2p_section(rs)]
