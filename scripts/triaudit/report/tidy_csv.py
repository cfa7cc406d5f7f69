"""tidy.csv, written several times faster than DataFrame.to_csv, byte for byte the same.

A hundred cards make a table of about a million rows (one per case and counter) and 200 MB of
CSV; pandas formats it value by value (6-7 s here, the slowest step of `report`). Most columns
(card, run, the case's name and its parts) are the same on every row of one case in one file:
they are formatted once per case, and only the counter columns row by row.

Whether a column really is constant over each case's rows is checked (adjacent rows compared),
not assumed; a table where it is not is written by pandas. The output equals
`df.to_csv(path, index=False, columns=columns)` (tests/test_tidy_csv.py compares them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

try:  # optional: only speed depends on it
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    _orjson = None

# Rows of one case in one file share every other column (table.load_table builds the table so).
KEYS = ("file", "case")
_SPECIAL = (",", '"', "\n", "\r")
CHUNK_ROWS = 100_000


def _quote(text: str) -> str:
    """csv.QUOTE_MINIMAL, as pandas writes."""
    if any(ch in text for ch in _SPECIAL):
        return '"' + text.replace('"', '""') + '"'
    return text


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and v != v) or v is pd.NA or v is pd.NaT:
        return ""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return _quote(str(v))


def float_texts(a: np.ndarray) -> list[str]:
    """Each float as pandas' to_csv writes it: repr() (the shortest text that reads back as the same
    number), "" for NaN. repr() of millions of floats was a third of tidy.csv's time; orjson writes
    the same shortest digits in C, and the same text for every finite value except those below 1e-4
    in magnitude (it writes 0.00001 and 1e-7 where repr writes 1e-05 and 1e-07): those, and the
    non-finite ones, get repr() (tests/test_tidy_csv.py compares the two over millions of values)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if _orjson is None or not len(a):
        return [repr(x) if x == x else "" for x in a.tolist()]
    texts = _orjson.dumps(a, option=_orjson.OPT_SERIALIZE_NUMPY)[1:-1].decode().split(",")
    with np.errstate(invalid="ignore"):
        odd = np.flatnonzero(~np.isfinite(a) | ((np.abs(a) < 1e-4) & (a != 0)))
    for i in odd.tolist():
        x = float(a[i])
        texts[i] = repr(x) if x == x else ""
    return texts


def _strings(s: pd.Series) -> list[str]:
    """One column as pandas' to_csv would write each value."""
    kind = s.dtype.kind
    if kind == "f":
        return float_texts(s.to_numpy())
    if kind in "iu":
        return [str(x) for x in s.to_numpy().tolist()]
    if kind == "b":
        return ["True" if x else "False" for x in s.to_numpy().tolist()]
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes, uniques = s.cat.codes.to_numpy(), s.cat.categories
    else:
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
    texts = [_cell(u) for u in uniques] + [""]  # code -1: missing
    return [texts[c] for c in codes.tolist()]


def write_table(df: pd.DataFrame, path: Path) -> None:
    """df as `df.to_csv(path, index=False)` writes it, a column at a time (the report's corner
    CSVs: tens of thousands of rows over a hundred cards, formatted value by value by pandas)."""
    if df.empty or not df.columns.is_unique or any(not isinstance(c, str) for c in df.columns):
        df.to_csv(path, index=False)
        return
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(",".join(_quote(c) for c in df.columns) + "\n")
        for i in range(0, len(df), CHUNK_ROWS):
            rows = df.iloc[i : i + CHUNK_ROWS]
            f.write("\n".join(map(",".join, zip(*(_strings(rows[c]) for c in df.columns)))))
            f.write("\n")


def _changes(a: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Where a column's value differs from the row before (two missing values are the same)."""
    if len(a) < 2:
        return np.zeros(0, dtype=bool)
    return (a[1:] != a[:-1]) & ~(missing[1:] & missing[:-1])


def _comparable(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(values to compare, missing): a categorical column by its codes (no strings compared)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = s.cat.codes.to_numpy()
        return codes, codes < 0
    return s.to_numpy(), s.isna().to_numpy()


def _boundary(df: pd.DataFrame) -> np.ndarray:
    """Where a run of rows with one (file, case) ends: between row i and i + 1."""
    boundary = np.zeros(max(len(df) - 1, 0), dtype=bool)
    for k in KEYS:
        boundary |= _changes(*_comparable(df[k]))
    return boundary


def _group_starts(df: pd.DataFrame, per_case: list[str], boundary: np.ndarray | None = None) -> np.ndarray | None:
    """The first row of each run of rows with one (file, case); None when a per-case column
    changes inside such a run (then the table is not what this writer assumes)."""
    boundary = _boundary(df) if boundary is None else boundary
    for c in per_case:
        if (_changes(*_comparable(df[c])) & ~boundary).any():
            return None
    return np.concatenate(([0], np.flatnonzero(boundary) + 1))


def _steady(df: pd.DataFrame, columns: list[str], boundary: np.ndarray) -> set[str]:
    """Of `columns` (which may vary within a case), those that do not in this table: the
    repetitions, status and message are one per case wherever every counter had every repetition.
    Integers, booleans and categorical text only: equal floats can differ in text (0.0, -0.0)."""
    out = set()
    for c in columns:
        s = df[c]
        if s.dtype.kind in "iub" or isinstance(s.dtype, pd.CategoricalDtype):
            if not (_changes(*_comparable(s)) & ~boundary).any():
                out.add(c)
    return out


def write(df: pd.DataFrame, path: Path, columns: list[str], row_columns: tuple[str, ...]) -> None:
    """df[columns] to `path` as CSV; `row_columns` vary within a case, the others must not."""
    if any(k not in df.columns for k in KEYS) or df.empty:
        df.to_csv(path, index=False, columns=columns)
        return
    per_case = [c for c in columns if c not in row_columns]
    boundary = _boundary(df)
    starts = _group_starts(df, per_case, boundary)
    if starts is None:
        df.to_csv(path, index=False, columns=columns)
        return
    # Row columns that are one per case here too are formatted once per case, with their neighbours.
    row_columns = tuple(set(row_columns) - _steady(df, [c for c in columns if c in row_columns], boundary))
    # Each row: segments in column order; a run of per-case columns is one segment, formatted
    # once per case and repeated by the row's group number. Rows are formatted a chunk at a time
    # (all at once, the strings of a million rows would take half a gigabyte).
    group = np.zeros(len(df), dtype=np.int64)
    group[starts[1:]] = 1
    group = np.cumsum(group)
    heads = df.iloc[starts]
    layout: list = []  # per segment: a column name (row by row) or the per-case texts
    pending: list[str] = []

    def flush() -> None:
        if pending:
            layout.append([",".join(parts) for parts in zip(*(_strings(heads[c]) for c in pending))])
            pending.clear()

    for c in columns:
        if c in row_columns:
            flush()
            layout.append(c)
        else:
            pending.append(c)
    flush()
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(",".join(_quote(str(c)) for c in columns) + "\n")
        for i in range(0, len(df), CHUNK_ROWS):
            rows = df.iloc[i : i + CHUNK_ROWS]
            groups = group[i : i + CHUNK_ROWS].tolist()
            segments = [_strings(rows[seg]) if isinstance(seg, str) else [seg[g] for g in groups] for seg in layout]
            f.write("\n".join(map(",".join, zip(*segments))))
            f.write("\n")
