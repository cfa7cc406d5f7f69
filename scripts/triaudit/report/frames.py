"""Small helpers over the tidy table: one metric of one corner as rows with the name's
arguments, the datasheet spec of a card, and number formatting."""

from __future__ import annotations

import math
import weakref

import numpy as np
import pandas as pd

from triaudit.core import numbers as N
from triaudit.core.specs import PRECISION_RATES, CardSpec, match_card
from triaudit.results.counters import JUDGED
from triaudit.results.figures import headline_figures, with_role
from triaudit.results.table import name_parts, plain, records

# The counter that says how fast a case was, in order of preference, and whether higher is better:
# the one list, in counters.py.
PRIMARY_METRICS = JUDGED


# GEMM precision name -> the datasheet column it is compared with.
SPEC_PRECISION = {p: rates[0] for p, rates in PRECISION_RATES.items()}


# Row positions per (corner, metric, ok) of a table, made once per table: the report asks for a few
# hundred (corner, metric) slices of up to a million rows. Keyed by the table's id, dropped with it.
_SLICES: dict[int, dict] = {}


def _slices(df: pd.DataFrame) -> dict:
    key = id(df)
    got = _SLICES.get(key)
    if got is None or got["n"] != len(df) or got["ref"]() is not df:
        ok = (df["status"] == "ok").to_numpy()
        groups = df.groupby(
            [df["corner"], df["metric"], pd.Series(ok, index=df.index)], sort=False, observed=True
        ).indices
        got = {"n": len(df), "ref": weakref.ref(df, lambda _: _SLICES.pop(key, None)), "groups": groups}
        _SLICES[key] = got
    return got["groups"]


def metric(df: pd.DataFrame, corner: str, name: str, ok_only: bool = True) -> pd.DataFrame:
    if df.empty or "corner" not in df:
        return pd.DataFrame()
    groups = _slices(df)
    parts = [groups.get((corner, name, True))] + ([] if ok_only else [groups.get((corner, name, False))])
    idx = [p for p in parts if p is not None]
    if not idx:
        return plain(df.iloc[0:0])
    pos = idx[0] if len(idx) == 1 else np.sort(np.concatenate(idx))
    return plain(df.iloc[pos])


# A collective's case is told apart by mode, type and NCCL algorithm (`algo:ring`, `algo:auto`; runs
# from before --algos have none: ""), then message size.
COLLECTIVE_KEY = ["op", "variant", "algo"]


def collective_rows(df: pd.DataFrame, corner: str, name: str) -> pd.DataFrame:
    """One metric of a collective's message-size sweep, with an `algo` column; the GPU-count sweep
    (<corner>/scaling/...) answers another question and has its own section."""
    rows = with_int(metric(df, corner, name), "bytes")
    if not rows.empty:
        rows = rows[rows["op"] != "scaling"]
    if "algo" not in rows:
        rows = rows.assign(algo="")
    return rows.assign(algo=rows["algo"].fillna("").astype(str))


def with_int(rows: pd.DataFrame, *cols: str) -> pd.DataFrame:
    for c in cols:
        if c in rows:
            rows[c] = pd.to_numeric(rows[c], errors="coerce")
    return rows


def spec_for(card: str) -> CardSpec | None:
    return match_card(card)


def spec_fraction(value: float, card: str, kind: str, precision: str | None = None) -> float | None:
    """value / datasheet peak for the card (kind: "bandwidth", "compute", "pcie"), or None."""
    spec = spec_for(card)
    if spec is None:
        return None
    if kind == "bandwidth":
        peak = spec.mem_bw
    elif kind == "pcie":
        peak = spec.pcie_gbps_per_direction * 1e9
    else:
        key = SPEC_PRECISION.get(precision or "", precision or "")
        peak = spec.peak_flops(key) or (spec.peak_flops("fp64") if key == "fp64_tc" else None)
    return value / peak if peak else None


def fmt(value: float, scale: float = 1.0) -> str:
    """A bare figure in the report's one style (core/numbers.py)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return N.number(value / scale)


def cell(row, scale: float, fraction: float | None = None, flag: str = "") -> str:
    """A table cell: the median ± half its range, the fraction of the datasheet where known, and
    why the figure is implausible (`flag`) where it is."""
    sp = row.get("spread_pct", math.nan)
    return N.figure(row["median"], scale, sp if isinstance(sp, float) else None, fraction, flag)


def over_link(fraction: float | None) -> str:
    """The flag of a copy above its link's theoretical rate (a fraction of it above 100 %)."""
    return "above the PCIe link's theoretical rate" if fraction is not None and fraction > 1.005 else ""


# What a cell says when a card has no figure for a row: the case's own status, never blank.
NOT_RUN = "not run"


def missing(df: pd.DataFrame, corner: str) -> pd.DataFrame:
    """The corner's cases that did not measure (skipped, errored): what fills their cells."""
    if df.empty:
        return df
    return plain(df[(df["corner"] == corner) & (df["status"] != "ok")])


def status_text(status: str, message: str) -> str:
    """What a cell says for a case that did not measure: "skipped: <why>", "error: <what>"."""
    m = str(message or "").removeprefix("skipped: ").removeprefix("error: ")
    return f"{status}: {m}" if m else str(status)


def pivot_cells(rows: pd.DataFrame, index: list[str], cell_fn, why: pd.DataFrame | None = None) -> pd.DataFrame:
    """Cards as columns, `index` as rows, cell_fn(row) in each cell. A card without a figure for
    a row says why: the status and message of its case in `why` (F.missing), else "not run".
    A `bytes` index level is shown as a size (16 MiB)."""
    if rows.empty:
        return pd.DataFrame()
    rows = rows.copy()
    rows["cell"] = [cell_fn(r) for r in records(rows)]
    t = rows.pivot_table(index=index, columns="card", values="cell", aggfunc="first", observed=True)
    reasons: dict[tuple, str] = {}
    if t.isna().any().any():
        if why is not None and not why.empty and all(c in why.columns for c in index):
            for r in records(why):
                key = tuple(str(r[c]) for c in index)
                reasons.setdefault((key, str(r["card"])), status_text(r["status"], r["message"]))
        for card in t.columns:
            for key in t.index[t[card].isna()]:
                k = tuple(str(x) for x in (key if isinstance(key, tuple) else (key,)))
                t.loc[key, card] = reasons.get((k, str(card)), NOT_RUN)
    if "bytes" in index:
        t = _sizes(t, index.index("bytes"))
    return footnote_reasons(t, set(reasons.values()))


# A reason repeated in more cells than this, in one table, is said once under it instead.
REPEATS = 2


def footnote_reasons(t: pd.DataFrame, reasons: set[str]) -> pd.DataFrame:
    """Each reason (a skip or error message, from `reasons`) that fills more than REPEATS cells of
    `t` is written once under the table (t.attrs["notes"], report/page.py prints them) and its
    cells say "skipped (a)" — the status and the note's letter — so a column is not squeezed by
    twelve copies of one sentence and no cell is left blank."""
    if t.empty or not reasons:
        return t
    counts: dict[str, int] = {}
    for v in t.to_numpy().ravel():
        if isinstance(v, str) and v in reasons:
            counts[v] = counts.get(v, 0) + 1
    repeated = [r for r in sorted(counts) if counts[r] > REPEATS]
    if not repeated:
        return t
    letter = {r: chr(ord("a") + i) if i < 26 else str(i + 1) for i, r in enumerate(repeated)}
    short = {r: f"{r.split(':', 1)[0]} ({letter[r]})" for r in repeated}
    t = t.apply(lambda col: col.map(lambda v: short.get(v, v) if isinstance(v, str) else v))
    notes = list(t.attrs.get("notes", ()))
    for r in repeated:
        cards = [str(c) for c in t.columns if (t[c] == short[r]).any()]
        notes.append(f"({letter[r]}) {r} — {counts[r]} cells of {', '.join(cards)}.")
    t.attrs["notes"] = notes
    return t


def _sizes(t: pd.DataFrame, level: int) -> pd.DataFrame:
    if isinstance(t.index, pd.MultiIndex):
        t.index = t.index.set_levels([N.size(v) for v in t.index.levels[level]], level=level, verify_integrity=False)
    else:
        t.index = pd.Index([N.size(v) for v in t.index], name=t.index.name)
    return t


# Plots draw at most this many columns (cards, or runs with --all-runs): a figure with a hundred
# cards is unreadable and takes minutes to lay out. The tables and CSV files hold every column.
MAX_PLOT_COLUMNS = 4


def plotted(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The rows of the first MAX_PLOT_COLUMNS columns (sorted), and a caption note naming what is left out."""
    if rows.empty or "card" not in rows:
        return rows, ""
    cards = sorted(rows["card"].dropna().unique())
    if len(cards) <= MAX_PLOT_COLUMNS:
        return rows, ""
    keep = cards[:MAX_PLOT_COLUMNS]
    return rows[rows["card"].isin(keep)], (
        f" (drawn: {len(keep)} of {len(cards)} columns, {', '.join(keep)}; every column is in the tables and CSV files)"
    )


def unknown_cards(cards) -> list[str]:
    return sorted(c for c in cards if c != "no GPU" and match_card(c) is None)


# --- energy: the headline figures' burst and sustained pairs, with their energy counters ----------

ENERGY_METRICS = (
    "watts_mean",
    "joules_per_op",
    "flops_per_joule",
    "bytes_per_joule",
    "busbw_per_watt",
    "energy_window_s",
    "power_samples_mean_w",
    "power_samples_max_w",
    "sm_clock_mean_mhz",
    "temperature_start_c",
    "temperature_end_c",
    "window_s",
    "sustained_elapsed_s",
)


def mode_of(case: str) -> str:
    parts = case.split("/")
    return "sustained" if (len(parts) > 3 and parts[3] == "sustained") or parts[1].endswith("_sustained") else "burst"


def energy_measures(df: pd.DataFrame, cases: pd.DataFrame) -> dict[tuple, dict]:
    """{(file, case): {metric: (median, min, max, repetitions)}} of the energy, clock and window counters."""
    if cases.empty:
        return {}
    keys = set(zip(cases["file"], cases["case"]))
    wanted = df["case"].isin({c for _, c in keys}) & df["metric"].isin(ENERGY_METRICS) & (df["status"] == "ok")
    rows = plain(df.loc[wanted, ["file", "case", "metric", "median", "min", "max", "reps"]])
    out: dict[tuple, dict] = {}
    for f, c, m, med, lo, hi, n in rows.itertuples(index=False):
        if (f, c) in keys:
            out.setdefault((f, c), {})[m] = (med, lo, hi, n)
    return out


def burst_sustained_frame(df: pd.DataFrame, contexts: dict | None = None) -> pd.DataFrame:
    """One row per (card, figure) of the headline figures that stand for a burst and a sustained
    rate (roles energy_burst, energy_sustained: the GEMM ceilings per precision, the HBM triad), as
    the one figure selector picks them (results/figures.py), with kind (the corner), name (the
    precision or type), mode, and the energy, clock and window counters of the case."""
    keys = {h.key for role in ("energy_burst", "energy_sustained") for h in with_role(role)}
    figs = headline_figures(df, contexts, keys=keys)
    if figs.empty:
        return pd.DataFrame()
    rows = figs.assign(
        metric=figs["counter"],
        kind=figs["corner"],
        name=[name_parts(str(c))[2] for c in figs["case"]],
        mode=["sustained" if "energy_sustained" in str(r) else "burst" for r in figs["roles"]],
    )
    rows = rows.sort_values(["kind", "card", "name"], kind="stable").reset_index(drop=True)
    m = energy_measures(df, rows)
    rows["counters"] = [m.get((f, c), {}) for f, c in zip(rows["file"], rows["case"])]
    return rows
