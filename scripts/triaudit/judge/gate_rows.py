"""The rows the gate reads, summed up for every GPU at once: the figure of a floor's case, the clock
flags, the health counters. The rules are the gate's (judge/gate.py _figure, gate_environment.py
clocks, gate_health.py health); only the grouping is done here, column-wise over the whole table
instead of a frame per GPU (at 8,192 GPUs those frames were most of the gate's time: 20 ms each).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from triaudit.judge.gate_checks import HEALTH_ERROR_PREFIX


@dataclass
class Figure:
    """What the rows of one GPU say of one floor's case and counter."""

    value: float | None = None  # the median over the files' medians, when a row measured it
    reps: int = 0
    files: int = 0  # rows measured (one per file)
    bad: tuple[str, str, str] | None = None  # (case, status, message) of the first row that did not run
    hits: bool = False  # any row of the case at all


@dataclass
class Clocks:
    cases: int = 0  # cases with a clock flag
    throttled: list[str] = field(default_factory=list)  # cases that slowed down, sorted
    low: list[str] = field(default_factory=list)  # cases whose busy clock stayed low, sorted

    @property
    def empty(self) -> bool:
        return self.cases == 0


@dataclass
class Health:
    errored: int = 0  # cases ended by a health event
    first_error: tuple[str, str] | None = None  # (case, message) of the first
    counts: dict[str, float] = field(default_factory=dict)  # counter -> its events over the run (sorted)
    cases: int = 0  # cases with a health counter
    counted: bool = False  # any health counter row at all


def _codes(col: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A text column as (codes, values): categorical ones as they are, others factorized."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy(dtype=np.int64), [str(c) for c in col.cat.categories]
    codes, uniques = pd.factorize(col, sort=False)
    return codes.astype(np.int64), [str(u) for u in uniques]


class GateRows:
    """The gate's rows (judge/gate.py _needed_rows: the table's, categorical or plain) and the unit
    each file belongs to (a GPU's key); summaries per unit, each computed once."""

    def __init__(self, rows: pd.DataFrame, unit_of_file: dict[str, str]):
        self.units: list[str] = sorted(set(unit_of_file.values()))
        index = {u: i for i, u in enumerate(self.units)}
        n = len(rows)
        self.unit_of_file = unit_of_file
        if n == 0:
            self.unit = np.zeros(0, dtype=np.int64)
            self.rows = rows
            return
        fcodes, fnames = _codes(rows["file"])
        self.unit_of_file = unit_of_file
        lut = np.array([index.get(unit_of_file.get(f, ""), -1) for f in fnames] + [-1], dtype=np.int64)
        self.unit = lut[fcodes]
        self.rows = rows
        self.case, self.case_names = _codes(rows["case"])
        self.metric, self.metric_names = _codes(rows["metric"])
        self.status, self.status_names = _codes(rows["status"])
        self.message, self.message_names = _codes(rows["message"])
        self.median = rows["median"].to_numpy(dtype=np.float64)
        self.max = rows["max"].to_numpy(dtype=np.float64)
        self.reps = rows["reps"].to_numpy()
        self._figures: dict[tuple[str, str], dict[str, Figure]] = {}

    def _is(self, codes: np.ndarray, names: list[str], test) -> np.ndarray:
        per = np.array([bool(test(n)) for n in names] + [False], dtype=bool)
        return per[codes]

    def figures(self, case_glob: str, metric: str) -> dict[str, Figure]:
        """Per unit, what its rows say of `case_glob` (fnmatch, as a floor names its case) and `metric`."""
        key = (case_glob, metric)
        if key in self._figures:
            return self._figures[key]
        out: dict[str, Figure] = {}
        self._figures[key] = out
        if not len(self.unit):
            return out
        pattern = re.compile(fnmatch.translate(case_glob))
        hit = self._is(self.case, self.case_names, pattern.match) & (self.unit >= 0)
        ok_status = self._is(self.status, self.status_names, lambda s: s == "ok")
        ok = hit & ok_status & self._is(self.metric, self.metric_names, lambda m: m == metric)
        for u in np.unique(self.unit[hit]).tolist():
            out[self.units[u]] = Figure(hits=True)
        if ok.any():
            g = pd.DataFrame({"u": self.unit[ok], "v": self.median[ok], "r": self.reps[ok]}).groupby("u")
            agg = g.agg(v=("v", "median"), r=("r", "sum"), n=("v", "size"))
            for u, v, r, n in zip(agg.index.tolist(), agg["v"].tolist(), agg["r"].tolist(), agg["n"].tolist()):
                f = out[self.units[u]]
                f.value, f.reps, f.files = float(v), int(r), int(n)
        bad = hit & ~ok_status
        if bad.any():
            where = np.flatnonzero(bad)
            units, first = np.unique(self.unit[where], return_index=True)
            for u, i in zip(units.tolist(), where[first].tolist()):
                out[self.units[u]].bad = (
                    self.case_names[self.case[i]],
                    self.status_names[self.status[i]],
                    self.message_names[self.message[i]] if self.message[i] >= 0 else "nan",
                )
        return out

    def clocks(self) -> dict[str, Clocks]:
        """Per unit, the cases with clock flags (throttled, clock_low) and those whose flag was raised."""
        out: dict[str, Clocks] = {}
        if not len(self.unit):
            return out
        ok = self._is(self.status, self.status_names, lambda s: s == "ok") & (self.unit >= 0)
        thr = ok & self._is(self.metric, self.metric_names, lambda m: m == "throttled")
        low = ok & self._is(self.metric, self.metric_names, lambda m: m == "clock_low")
        flagged = thr | low
        if not flagged.any():
            return out
        f = pd.DataFrame({"u": self.unit[flagged], "c": self.case[flagged]})
        for u, n in f.groupby("u")["c"].nunique().items():
            out[self.units[u]] = Clocks(int(n))
        for mask, attr in ((thr, "throttled"), (low, "low")):
            raised = mask & (self.max > 0)
            for u, c in set(zip(self.unit[raised].tolist(), self.case[raised].tolist())):
                getattr(out[self.units[u]], attr).append(self.case_names[c])
        for c in out.values():
            c.throttled.sort()
            c.low.sort()
        return out

    def health(self, counters: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> dict[str, Health]:
        """Per unit: the cases a health event ended, and each health counter's events over the run
        (each case's largest repetition, summed). `counters`: health_counters' two tables, when the
        rows do not hold the counters (a results store sums them itself: store/source.py)."""
        out: dict[str, Health] = {}
        if not len(self.unit) and counters is None:
            return out
        errored = np.zeros(0, dtype=bool)
        if len(self.unit):
            errored = (
                (self.unit >= 0)
                & self._is(self.status, self.status_names, lambda s: s == "error")
                & self._is(self.message, self.message_names, lambda m: m.startswith(HEALTH_ERROR_PREFIX))
            )
        if errored.any():
            where = np.flatnonzero(errored)
            units, first, count = np.unique(self.unit[where], return_index=True, return_counts=True)
            for u, i, n in zip(units.tolist(), where[first].tolist(), count.tolist()):
                out.setdefault(self.units[u], Health()).errored = n
                out[self.units[u]].first_error = (self.case_names[self.case[i]], self.message_names[self.message[i]])
        if counters is None:
            counters = health_counters(self.rows)
        sums, pairs = counters
        unit_of = self.unit_of_file
        if len(pairs):
            per_unit = pd.DataFrame({"u": _units(pairs["file"], unit_of), "c": pairs["case"].to_numpy()})
            per_unit = per_unit[per_unit["u"] != ""]
            for u, n in per_unit.groupby("u")["c"].nunique().items():
                h = out.setdefault(u, Health())
                h.cases, h.counted = int(n), True
        if len(sums):
            got = pd.DataFrame(
                {
                    "u": _units(sums["file"], unit_of),
                    "m": sums["metric"].astype(str).to_numpy(),
                    "x": sums["total"].to_numpy(),
                }
            )
            got = got[got["u"] != ""].groupby(["u", "m"])["x"].sum()
            for (u, m), x in got.items():  # sorted by unit, then counter
                out[u].counts[str(m)] = float(x)
        return out


def _units(files: pd.Series, unit_of: dict[str, str]) -> np.ndarray:
    """Each row's unit ("" for none) by its file, computed once per distinct file."""
    codes, names = _codes(files)
    lut = np.array([unit_of.get(f, "") for f in names] + [""], dtype=object)
    return lut[codes]


HEALTH_ROWS = ("file", "metric", "total")


def health_counters(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gate's health counters of some rows, summed per file: (file, metric, total: the sum over
    its cases of each case's largest repetition, NaN as none) and the (file, case) pairs that have
    one. store/source.py computes the same two tables in SQL (tests hold them equal)."""
    if rows.empty:
        return pd.DataFrame(columns=list(HEALTH_ROWS)), pd.DataFrame(columns=["file", "case"])
    status, status_names = _codes(rows["status"])
    metric, metric_names = _codes(rows["metric"])
    ok = np.array([s == "ok" for s in status_names] + [False])[status]
    counter = np.array([m.startswith("health_") for m in metric_names] + [False])[metric]
    keep = np.flatnonzero(ok & counter)
    sub = pd.DataFrame(
        {
            "file": rows["file"].iloc[keep].astype(str).to_numpy(),
            "metric": np.array(metric_names, dtype=object)[metric[keep]],
            "case": rows["case"].iloc[keep].astype(str).to_numpy(),
            "total": np.nan_to_num(rows["max"].to_numpy(dtype=np.float64)[keep], nan=0.0),
        }
    )
    sums = sub.groupby(["file", "metric"], sort=False)["total"].sum().reset_index()
    return sums, sub[["file", "case"]].drop_duplicates()
