"""A result file's cases as the report table's columns: one entry per (case, metric) with the
median, min, max, spread and number of repetitions, or one entry with the status and message of a
case that was not measured.

Two paths, one answer. A case whose rows are all plain (repetitions and aggregates that ran, finite
numbers, one set of counters, distinct repetition indices) is computed column-wise with numpy: a
hundred cards are tens of millions of numbers, and record by record in Python they were most of a
report's time. Every other case (skipped, errored, aggregates only, NaN or Infinity, a conflict, a
counter that is not a number) goes through gbench's records, which are the reference: a case is
never judged by the fast path unless it is certainly plain. tests/test_columns.py checks that both
give the same columns, bit for bit, on real outputs and on synthetic files built to hit each branch.
"""

from __future__ import annotations

import math
from array import array
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from triaudit.results.case_info import case_descriptions
from triaudit.results.gbench import (
    COMPLEXITY_AGGREGATES,
    COMPLEXITY_ROWS,
    STANDARD_FIELDS,
    TIME_UNITS,
    Run,
    case_name,
    checked_entries,
    entry_run,
    file_notes,
    mark_conflicts,
)

_ABSENT = object()  # a field not in an entry (None is a JSON value)
# The columns that differ between the rows of one case in one file (one row per counter).
METRIC_COLS = ("metric", "median", "min", "max", "spread_pct", "reps", "status", "message")
_FLOAT_COLS = ("median", "min", "max", "spread_pct")


def _stats(values: list[float]) -> tuple[float, float, float, float, int]:
    values = sorted(values)
    n = len(values)
    med = values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
    lo, hi = values[0], values[-1]
    return med, lo, hi, ((hi - lo) / abs(med) * 100 if med else math.nan), n


def case_rows(runs: list[Run], file_name: str) -> list[tuple]:
    """One case's rows (metric, median, min, max, spread_pct, reps, status, message), from its
    records: the reference every path must agree with."""
    nan = math.nan
    bad = [r for r in runs if r.status != "ok"]
    if bad:
        worst = next((r for r in bad if r.status == "error"), bad[0])
        return [("", nan, nan, nan, nan, 0, worst.status, worst.message)]
    iterations = [r for r in runs if r.run_type == "iteration"]
    if iterations:
        times = [r.time_s for r in iterations if r.time_s == r.time_s]  # NaN: no time printed (peer imports)
        samples: dict[str, list[float]] = {"time_s": times} if times else {}
        for r in iterations:
            for k, v in r.counters.items():
                samples.setdefault(k, []).append(v)
        return [(m, *_stats(values), "ok", "") for m, values in samples.items()]
    # aggregates only (--benchmark_report_aggregates_only)
    median = next((r for r in runs if r.aggregate_name == "median"), None)
    if median is None:
        kinds = sorted({r.aggregate_name or "unnamed" for r in runs})
        msg = f"{file_name}: only aggregates ({', '.join(kinds)}) and no median: nothing to show"
        return [("", nan, nan, nan, nan, 0, "skipped", msg)]
    return [
        (m, v, nan, nan, nan, 0, "ok", "aggregates only")
        for m, v in {"time_s": median.time_s, **median.counters}.items()
    ]


def _empty_cols() -> dict:
    return {
        "take": array("q"),
        "metric": [],
        "median": array("d"),
        "min": array("d"),
        "max": array("d"),
        "spread_pct": array("d"),
        "reps": array("q"),
        "status": [],
        "message": [],
    }


def _append(cols: dict, i: int, row: tuple) -> None:
    cols["take"].append(i)
    for c, v in zip(METRIC_COLS, row):
        cols[c].append(v)


def reference_columns(runs: list[Run], file_name: str) -> tuple[list[str], dict]:
    """The cases (in order of first appearance) and their columns, record by record."""
    by_case: dict[str, list[Run]] = {}
    for r in runs:
        by_case.setdefault(r.case, []).append(r)
    cols = _empty_cols()
    for i, case_runs in enumerate(by_case.values()):
        for row in case_rows(case_runs, file_name):
            _append(cols, i, row)
    return list(by_case), cols


def _reference(data: Any, path: Path) -> tuple[dict, list[str], list[str], dict]:
    context, entries = checked_entries(data, path)
    skipped: dict[str, int] = {}
    runs = [r for i, e in enumerate(entries) if (r := entry_run(i, e, path, skipped)) is not None]
    mark_conflicts(runs, path)
    return (context, file_notes(path, context, skipped), *reference_columns(runs, path.name))


def _finite_matrix(rows: list) -> np.ndarray | None:
    """Rows of JSON values as a float64 matrix when every value is a finite int or float (bool is
    not a number here); None otherwise."""
    if not set(map(type, chain.from_iterable(rows))) <= {float, int}:
        return None
    if not rows:
        return np.zeros(0)
    width = len(rows[0])
    try:  # float(v) of each, as np.array(rows) converts them, without its look at the nesting
        a = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=len(rows) * width)
    except OverflowError:  # an integer beyond any float
        return None
    return a.reshape(len(rows), width) if np.isfinite(a).all() else None


def _finite_numbers(col: Any) -> np.ndarray | None:
    """One column of JSON values, as _finite_matrix."""
    m = _finite_matrix([col])
    return None if m is None else m[0]


def _plain(v: Any) -> bool:
    t = type(v)
    if t is float:
        return v - v == 0.0
    if t is int:
        try:
            float(v)
        except OverflowError:
            return False
        return True
    return False


def _plain_rows(col: Any) -> np.ndarray:
    """Per value: a finite int or float."""
    return np.fromiter(map(_plain, col), dtype=bool, count=len(col))


TEXT_COLS = ("metric", "status", "message")


def encode_text(values: list[str]) -> tuple[list[str], np.ndarray]:
    """A text column as (distinct values in order of first appearance, each row's index into them)."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    return list(index), codes


def file_columns(data: Any, path: Path, encoded: bool = False) -> tuple[dict, list[str], list[str], dict]:
    """(context, notes, cases, columns) of a parsed Google Benchmark JSON file; LoadError as gbench
    gives it. The columns: "take" (the case's index in `cases`) and METRIC_COLS, one entry each per
    (case, metric), in the order of reference_columns. `encoded`: the text columns (TEXT_COLS) as
    encode_text gives them, compact for the trip from a worker process."""
    context, notes, cases, cols = _file_columns(data, path, encoded)
    info = _descriptions(data, context, cases)
    if info is not None:
        cols["info"] = info
    if encoded:
        for c in TEXT_COLS:
            if not isinstance(cols[c], tuple):
                cols[c] = encode_text(cols[c])
    return context, notes, cases, cols


def _descriptions(data: Any, context: dict, cases: list[str]) -> list[dict | None] | None:
    """Per case, what its entries say of it (schema 2, case_info.py); None for a file that says nothing."""
    if str(context.get("triaudit_schema_version", "1")) == "1":
        return None
    entries = data.get("benchmarks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    names = [e.get("run_name", e.get("name")) if type(e) is dict else None for e in entries]
    case_of = {n: case_name(n) for n in set(names) if type(n) is str}
    got = case_descriptions(entries, names, case_of)
    return [got.get(c) for c in cases] if got else None


def _file_columns(data: Any, path: Path, encoded: bool) -> tuple[dict, list[str], list[str], dict]:
    context, entries = checked_entries(data, path)
    # Pass 1, a column at a time over the entries: each entry's case, and which cases are not plain.
    if set(map(type, entries)) - {dict}:
        return _reference(data, path)  # an entry that is not an object: gbench says which
    names = [e.get("run_name") for e in entries]
    if None in names:
        names = [e.get("run_name", e.get("name")) for e in entries]
    if set(map(type, names)) - {str} or "" in names:
        return _reference(data, path)  # an entry without a name
    run_types = [e.get("run_type", "iteration") for e in entries]
    if set(map(type, run_types)) - {str} or set(run_types) - {"iteration", "aggregate"}:
        return _reference(data, path)  # unknown run_type (or not a string)
    flagged = [i for i, e in enumerate(entries) if "error_occurred" in e or "skipped" in e]
    is_agg = [t == "aggregate" for t in run_types]
    complexity_rows = [
        i
        for i, agg in enumerate(is_agg)
        if agg
        and ("big_o" in entries[i] or "rms" in entries[i] or entries[i].get("aggregate_name") in COMPLEXITY_AGGREGATES)
    ]
    for i in complexity_rows:
        is_agg[i] = None  # a complexity row: skipped, counted, no case
    complexity = len(complexity_rows)
    case_of = {n: case_name(n) for n in dict.fromkeys(names)}
    case_index: dict[str, int] = {}
    if complexity:
        entry_case = [  # per entry; -1 for a complexity row
            case_index.setdefault(case_of[n], len(case_index)) if agg is not None else -1
            for n, agg in zip(names, is_agg)
        ]
    else:  # cases numbered in order of first appearance, a name at a time
        index_of = {n: case_index.setdefault(case_of[n], len(case_index)) for n in case_of}
        entry_case = [index_of[n] for n in names]
    cases = list(case_index)
    slow = {entry_case[i] for i in flagged}
    bad = set(flagged)
    iter_pos = [i for i, agg in enumerate(is_agg) if agg is False and i not in bad]
    agg_pos = [i for i, agg in enumerate(is_agg) if agg and i not in bad]
    iter_case = [entry_case[i] for i in iter_pos]
    agg_case = [entry_case[i] for i in agg_pos]
    # Rows that cannot be told apart: a repetition_index twice, an aggregate of one kind twice.
    reps = [entries[i].get("repetition_index") for i in iter_pos]
    if set(map(type, reps)) - {int}:
        slow.update(ci for ci, r in zip(iter_case, reps) if type(r) is not int)
        reps = [r if type(r) is int else None for r in reps]  # (those cases are slow already)
    for keys, owners in (
        (list(zip(iter_case, reps)), iter_case),
        (list(zip(agg_case, (str(entries[i].get("aggregate_name", "")) for i in agg_pos))), agg_case),
    ):
        if len(set(keys)) != len(keys):
            seen: set = set()
            for key, ci in zip(keys, owners):
                if key in seen:
                    slow.add(ci)
                seen.add(key)

    # Pass 2, column by column over entries that share their keys: numbers finite, units known.
    # Aggregates: every time must be a finite number; only the median's counters are read.
    agg_times = [entries[i].get("real_time", _ABSENT) for i in agg_pos]
    if any(t is _ABSENT for t in agg_times):
        return _reference(data, path)  # an aggregate without a time: gbench refuses the file
    medians = [j for j, i in enumerate(agg_pos) if entries[i].get("aggregate_name") == "median"]
    if _finite_numbers(agg_times) is None:
        if any(type(v) not in (float, int) for v in agg_times):
            return _reference(data, path)  # not a number: gbench refuses the file
        slow.update(ci for ci, p in zip(agg_case, _plain_rows(agg_times).tolist()) if not p)
    agg_units = [entries[i].get("time_unit", "ns") for i in agg_pos]
    if set(map(type, agg_units)) - {str} or not set(agg_units) <= TIME_UNITS.keys():
        return _reference(data, path)
    case_sig: dict[int, tuple] = {}  # a plain case's counters (in the file's order)
    blocks: list[tuple[np.ndarray, np.ndarray, tuple]] = []  # (case per row, values, counter names)
    for positions, is_iter in ((iter_pos, True), ([agg_pos[j] for j in medians], False)):
        sigs = [tuple(entries[i]) for i in positions]
        groups: dict[tuple, list[int]] = dict.fromkeys(sigs)  # type: ignore[assignment]
        if len(groups) == 1:  # the usual file: every row with the same keys
            groups = {sigs[0]: positions}
        else:
            groups = {}
            for i, sig in zip(positions, sigs):
                groups.setdefault(sig, []).append(i)
        for sig, rows in groups.items():
            if "real_time" not in sig:
                return _reference(data, path)  # gbench refuses the file
            ents = [entries[i] for i in rows]
            row_case = np.array([entry_case[i] for i in rows], dtype=np.int64)
            ok = np.ones(len(rows), dtype=bool)
            units = [e["time_unit"] for e in ents] if "time_unit" in sig else ["ns"] * len(ents)
            if set(map(type, units)) - {str} or not set(units) <= TIME_UNITS.keys():
                return _reference(data, path)
            counters = [k for k in sig if k not in STANDARD_FIELDS]
            wanted = ["real_time", *counters]
            # The wanted fields as columns, in C (itemgetter of one key gives the value, not a tuple).
            picked = list(map(itemgetter(*wanted), ents)) if len(wanted) > 1 else [(e["real_time"],) for e in ents]
            matrix = _finite_matrix(picked)  # the usual block: every value a finite number, at once
            if matrix is None:  # column by column, to find the rows that are not plain
                values = []
                for k, col in zip(wanted, zip(*picked)):
                    a = _finite_numbers(col)
                    if a is None:
                        if k == "real_time" and any(type(v) not in (float, int) for v in col):
                            return _reference(data, path)  # not a number: gbench refuses the file
                        ok &= _plain_rows(col)
                        a = np.array([float(v) if p else 0.0 for v, p in zip(col, ok)], dtype=np.float64)
                    values.append(a)
                matrix = np.column_stack(values)
            for ci in set(row_case[~ok].tolist()):
                slow.add(ci)
            if not is_iter:
                continue
            matrix[:, 0] *= np.array([TIME_UNITS[u] for u in units])
            sig_counters = tuple(counters)
            if "time_s" in sig_counters:  # a counter named like the time: the records pool them
                slow.update(row_case.tolist())
            for ci in set(row_case.tolist()):
                if case_sig.setdefault(ci, sig_counters) != sig_counters:
                    slow.add(ci)  # repetitions with different counters: the records pool them
            blocks.append((row_case, matrix, sig_counters))

    # A case is plain when every one of its rows is and it has repetitions (not aggregates only).
    for ci in range(len(cases)):
        if ci not in case_sig:
            slow.add(ci)

    # The plain cases' statistics, a block of cases with one set of counters and n repetitions at a time.
    out_case, out_pos, out_stats, out_reps, out_metric = [], [], [], [], []
    metric_names: dict[str, int] = {}
    for row_case, vals, sig_counters in blocks:
        keep = ~np.isin(row_case, np.fromiter(slow, dtype=np.int64, count=len(slow))) if slow else None
        if keep is not None:
            row_case, vals = row_case[keep], vals[keep]
        if not len(row_case):
            continue
        order = np.argsort(row_case, kind="stable")
        row_case, vals = row_case[order], vals[order]
        block_cases, starts, counts = np.unique(row_case, return_index=True, return_counts=True)
        m = vals.shape[1]
        codes = np.array([metric_names.setdefault(k, len(metric_names)) for k in ("time_s", *sig_counters)])
        for n in np.unique(counts).tolist():
            sel = counts == n
            idx = starts[sel][:, None] + np.arange(n)
            v = np.sort(vals[idx], axis=1, kind="stable")  # (cases, n, metrics)
            lo, hi = v[:, 0, :], v[:, n - 1, :]
            med = v[:, n // 2, :] if n % 2 else (v[:, n // 2 - 1, :] + v[:, n // 2, :]) / 2
            with np.errstate(divide="ignore", invalid="ignore"):
                spread = np.where(med != 0, (hi - lo) / np.abs(med) * 100, np.nan)
            k = int(sel.sum())
            out_case.append(np.repeat(block_cases[sel], m))
            out_pos.append(np.tile(np.arange(m), k))
            out_stats.append(np.stack([med, lo, hi, spread], axis=2).reshape(k * m, 4))
            out_reps.append(np.full(k * m, n, dtype=np.int64))
            out_metric.append(np.tile(codes, k))

    # The other cases, from their records (gbench raises for the file as it would).
    slow_rows: list[tuple] = []
    if slow:
        skipped: dict[str, int] = {}
        runs = [
            r
            for i, (e, ci) in enumerate(zip(entries, entry_case))
            if ci in slow and (r := entry_run(i, e, path, skipped)) is not None
        ]
        mark_conflicts(runs, path)
        by_case: dict[int, list[Run]] = {}
        for r in runs:
            by_case.setdefault(case_index[r.case], []).append(r)
        for ci, case_runs in by_case.items():
            slow_rows += [(ci, pos, row) for pos, row in enumerate(case_rows(case_runs, path.name))]

    n_fast = sum(len(c) for c in out_case)
    case_col = np.concatenate(out_case + [np.array([r[0] for r in slow_rows], dtype=np.int64)])
    pos_col = np.concatenate(out_pos + [np.array([r[1] for r in slow_rows], dtype=np.int64)])
    order = np.lexsort((pos_col, case_col))
    cols = _empty_cols()
    cols["take"] = array("q", case_col[order].tobytes())
    names = list(metric_names)
    stats = np.concatenate(out_stats) if out_stats else np.zeros((0, 4))
    rep_counts = np.concatenate(out_reps) if out_reps else np.zeros(0, dtype=np.int64)
    metric = np.concatenate(out_metric) if out_metric else np.zeros(0, dtype=np.int64)
    fast = order < n_fast
    if fast.all():
        stats, rep_counts = stats[order], rep_counts[order]
        for j, c in enumerate(_FLOAT_COLS):
            cols[c] = array("d", np.ascontiguousarray(stats[:, j]).tobytes())
        cols["reps"] = array("q", rep_counts.tobytes())
        if encoded:  # already codes: no text per row
            none = np.zeros(len(order), dtype=np.int64)
            cols["metric"], cols["status"], cols["message"] = (names, metric[order]), (["ok"], none), ([""], none)
        else:
            cols["metric"] = [names[c] for c in metric[order].tolist()]
            cols["status"] = ["ok"] * len(order)
            cols["message"] = [""] * len(order)
    else:
        for o in order.tolist():
            if o < n_fast:
                row = (names[metric[o]], *stats[o].tolist(), int(rep_counts[o]), "ok", "")
            else:
                row = slow_rows[o - n_fast][2]
            for c, v in zip(METRIC_COLS, row):
                cols[c].append(v)
    skipped_rows = {COMPLEXITY_ROWS: complexity} if complexity else {}
    return context, file_notes(path, context, skipped_rows), cases, cols
