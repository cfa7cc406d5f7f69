"""The one figure selector: each card's headline figures, picked from the tidy table by the rules the
corners declare (corners/base.py Headline). The summary, `plan --run`, the gate, `floors derive`,
the energy section and `triaudit figures` all call `headline_figures`, so one run never shows two
HBM figures.

For a headline and a card (or whatever `by` groups on):
  1. the first of its source globs that has a measured row of its counter for the card;
  2. among those rows, the ones at the largest value of its `largest` axis (the largest array);
  3. per case, the median over the files that hold it (several GPUs of one card: their median);
  4. the best case by that median (`best`: max, or min for times).
A per-link headline (p2p) does this per link type of the pair (the context's p2p_link_<i>_<j>), a
collective's only over at least `min_ranks` GPUs. Pure functions of the table and the contexts.
"""

from __future__ import annotations

import fnmatch
import math
import re

import numpy as np
import pandas as pd

from triaudit import corners as registry
from triaudit.core.specs import PRECISION_RATES, match_card
from triaudit.corners.base import Corner, Headline
from triaudit.results.case_info import gpu_measured  # noqa: F401 (the one rule, re-exported for the readers)
from triaudit.results.table import plain

COLUMNS = [
    "card",
    "key",
    "corner",
    "account",
    "label",
    "counter",
    "scale",
    "case",
    "file",
    "run",
    "median",
    "min",
    "max",
    "spread_pct",
    "reps",
    "files",
    "fraction",
    "watts",
    "ranks",
    "bytes",
    "src",
    "dst",
    "link",
    "provenance",
    "roles",
]


def datasheet_fraction(value: float, card: str, what: str) -> float | None:
    """value / the card's datasheet figure: "bandwidth" (HBM), "pcie" (one direction of its link),
    "compute:<precision>" (its dense peak); None where unknown."""
    spec = match_card(card)
    if spec is None or not what or not value == value:
        return None
    if what == "bandwidth":
        peak = spec.mem_bw
    elif what == "pcie":
        peak = spec.pcie_gbps_per_direction * 1e9
    elif what.startswith("compute:"):
        precision = what.split(":", 1)[1]
        key = PRECISION_RATES.get(precision, (precision,))[0]
        peak = spec.peak_flops(key) or (spec.peak_flops("fp64") if key == "fp64_tc" else None)
    else:
        return None
    return value / peak if peak else None


_GLOB_CACHE: dict[str, re.Pattern] = {}


def _glob(pattern: str) -> re.Pattern:
    got = _GLOB_CACHE.get(pattern)
    if got is None:
        got = _GLOB_CACHE[pattern] = re.compile(fnmatch.translate(pattern))
    return got


def source_index(cases: pd.Series, sources: tuple[str, ...]) -> np.ndarray:
    """Per row, the index of the first source glob its case matches (len(sources): none). Matched
    per distinct case name (a table of a million rows holds a few thousand)."""
    names = cases.astype("category")
    cats = [str(c).removesuffix("/manual_time") for c in names.cat.categories]
    per_cat = np.array(
        [next((i for i, s in enumerate(sources) if _glob(s).match(c)), len(sources)) for c in cats] + [len(sources)],
        dtype=np.int64,
    )
    return per_cat[names.cat.codes.to_numpy()]  # code -1 (missing) takes the last entry: no source


def _corner_rows(table: pd.DataFrame, corner: Corner, counters: set[str]) -> pd.DataFrame:
    t = table
    sel = (t["corner"] == corner.name) & (t["status"] == "ok") & t["metric"].isin(counters)
    return plain(t[sel.to_numpy()])


def _counter_of(table: pd.DataFrame, corner: str, counter: str) -> dict[tuple[str, str], float]:
    """(file, case) -> the median of another counter of the same case (watts, ranks)."""
    t = table
    sel = ((t["corner"] == corner) & (t["metric"] == counter) & (t["status"] == "ok")).to_numpy()
    if not sel.any():
        return {}
    r = t.loc[sel, ["file", "case", "median"]]
    return {(str(f), str(c)): float(v) for f, c, v in r.itertuples(index=False)}


def _link_of(contexts: dict[str, dict], file: str, src, dst) -> str:
    ctx = contexts.get(file, {})
    return str(ctx.get(f"p2p_link_{src}_{dst}", "unknown")).split(" ")[0] or "unknown"


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _pick(
    rows: pd.DataFrame, h: Headline, by: list[str], ranks: dict, contexts: dict[str, dict], corner: Corner
) -> pd.DataFrame:
    """The headline's chosen case per group of `rows` (one counter's measured rows of one corner)."""
    rows = rows[rows["metric"] == h.counter]
    if rows.empty:
        return rows
    src = source_index(rows["case"], h.sources)
    if "headline" in rows:  # schema 2: a case tagged for this headline is its first source
        src = np.where(rows["headline"].astype(str).to_numpy() == h.key, 0, src)
    rows = rows.assign(_src=src)
    rows = rows[rows["_src"] < len(h.sources)]
    if rows.empty:
        return rows
    if h.min_ranks:
        r = np.array(
            [
                ranks.get((str(f), str(c)), _num(contexts.get(str(f), {}).get(corner.ranks_context, 1)))
                for f, c in zip(rows["file"], rows["case"])
            ]
        )
        rows = rows.assign(ranks=r)
        rows = rows[rows["ranks"].fillna(1) >= h.min_ranks]
        if rows.empty:
            return rows
    keys = list(by)
    if h.per_link:
        rows = rows.assign(
            link=[_link_of(contexts, str(f), s, d) for f, s, d in zip(rows["file"], rows["src"], rows["dst"])]
        )
        keys.append("link")
    # 1. the first source each group has
    rows = rows[rows["_src"] == rows.groupby(keys, observed=True)["_src"].transform("min")]
    # 2. the largest value of the axis, where the rows have it
    if h.largest and h.largest in rows:
        axis = pd.to_numeric(rows[h.largest], errors="coerce")
        top = axis.groupby([rows[k] for k in keys], observed=True).transform("max")
        rows = rows[(axis == top) | top.isna()]
    # 3. per case, the median over the files that hold it (one GPU's file: its own row)
    group_case = keys + ["case"]
    agg = rows.groupby(group_case, observed=True, sort=False).agg(
        median=("median", "median"),
        min=("min", "min"),
        max=("max", "max"),
        reps=("reps", "sum"),
        files=("file", "nunique"),
    )
    first = rows.drop_duplicates(group_case).set_index(group_case)
    agg = agg.join(first.drop(columns=["median", "min", "max", "reps"]), how="left").reset_index()
    one = agg["files"] == 1
    spread = np.where(agg["median"] != 0, (agg["max"] - agg["min"]) / agg["median"].abs() * 100, np.nan)
    agg["spread_pct"] = np.where(one, agg["spread_pct"], spread) if "spread_pct" in agg else spread
    # 4. the best case per group
    order = agg["median"].rank(method="first", ascending=h.best != "max")
    best = agg.loc[order.groupby([agg[k] for k in keys], observed=True).idxmin()]
    return best


def headline_figures(
    table: pd.DataFrame,
    contexts: dict[str, dict] | None = None,
    by: tuple[str, ...] = ("card",),
    keys: set[str] | None = None,
) -> pd.DataFrame:
    """Every headline figure per group of `by` (default: per card), one row each (COLUMNS, `by`
    in place of card). `keys`: only these headlines (a per-link key as declared: p2p/{link}/slowest)."""
    contexts = contexts or {}
    group = list(by)
    out: list[pd.DataFrame] = []
    if table is None or table.empty:
        return pd.DataFrame(columns=group + COLUMNS[1:])
    for corner in registry.CORNERS:
        wanted = [h for h in corner.headlines if keys is None or h.key in keys]
        if not wanted:
            continue
        rows = _corner_rows(table, corner, {h.counter for h in wanted})
        if rows.empty:
            continue
        ranks = _counter_of(table, corner.name, "ranks") if any(h.min_ranks for h in wanted) else {}
        watts = _counter_of(table, corner.name, "watts_mean")
        for h in wanted:
            best = _pick(rows, h, group, ranks, contexts, corner)
            if best.empty:
                continue
            card_col = best["card"] if "card" in best else pd.Series([""] * len(best), index=best.index)
            link = best["link"] if "link" in best else pd.Series([""] * len(best), index=best.index)
            f = pd.DataFrame({k: best[k].to_numpy() for k in group})
            f["key"] = [h.key.format(link=lk) for lk in link]
            f["corner"] = corner.name
            f["account"] = corner.account
            f["label"] = [h.label.format(link=lk) for lk in link]
            f["counter"] = h.counter
            f["scale"] = h.scale
            for c in ("case", "file", "run", "median", "min", "max", "spread_pct", "reps", "files"):
                f[c] = best[c].to_numpy() if c in best else np.nan
            f["fraction"] = [
                datasheet_fraction(float(v), str(c), h.datasheet) for v, c in zip(best["median"], card_col)
            ]
            f["watts"] = [watts.get((str(fi), str(c))) for fi, c in zip(best["file"], best["case"])]
            f["ranks"] = best["ranks"].to_numpy() if "ranks" in best else np.nan
            for c in ("bytes", "src", "dst"):
                f[c] = pd.to_numeric(best[c], errors="coerce").to_numpy() if c in best else np.nan
            f["link"] = link.to_numpy()
            f["provenance"] = best["provenance"].to_numpy() if "provenance" in best else ""
            f["roles"] = "|".join(h.roles)
            out.append(f)
    if not out:
        return pd.DataFrame(columns=group + COLUMNS[1:])
    got = pd.concat(out, ignore_index=True)
    return got[group + [c for c in COLUMNS if c not in group and c != "card"]]


def missing_reasons(table: pd.DataFrame, h: Headline, by: str = "card") -> dict[str, tuple[str, str]]:
    """Per group, (status, message) of the first case of a headline's sources that did not measure
    (skipped, errored): what a cell without the figure says instead."""
    if table is None or table.empty:
        return {}
    corner = h.sources[0].split("/", 1)[0]
    t = table
    bad = plain(t[((t["corner"] == corner) & (t["status"] != "ok")).to_numpy()])
    if bad.empty:
        return {}
    hit = bad[source_index(bad["case"], h.sources) < len(h.sources)]
    first = hit.drop_duplicates(by)
    return {str(g): (str(s), str(m)) for g, s, m in zip(first[by], first["status"], first["message"])}


def figure(figs: pd.DataFrame, key: str, card: str, by: str = "card") -> dict | None:
    """One headline figure of one card as a dict (COLUMNS), None when it has none."""
    if figs.empty:
        return None
    hit = figs[(figs["key"] == key) & (figs[by] == card)]
    return None if hit.empty else hit.iloc[0].to_dict()


def with_role(role: str) -> list[Headline]:
    """The headlines that stand for `role` ("hbm", "gradient_sync", "ridge_flops", ...), registry order."""
    return [h for _, h in registry.headlines() if role in h.roles]
