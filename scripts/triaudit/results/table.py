"""Any number of result files -> one tidy table.

One row per (result file, case, metric): the card, the run (its folder), the corner/op/variant and
the name's arguments as columns (m, n, k, bytes, ...), then the median, min, max, spread and number
of repetitions (reps). Skipped and errored cases get one row with their status and message and no
number. A case that two files of one run (and one GPU) both report is a conflict: one error row
naming both files, never two numbers in one column.

Built column-wise (a case's name is parsed once, rows are a take of per-case rows): a report over
100 cards x the whole catalogue stays in seconds. load_results gives the table with what the rows
do not hold (a ResultSet: each file's context, each run's manifest, the notes); load_table the
table alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from triaudit.core.specs import canonical_gpu_name
from triaudit.results.case_info import axes_of, gpu_measured, provenance
from triaudit.results.categorical import recode
from triaudit.results.columns import METRIC_COLS, TEXT_COLS
from triaudit.results.plausible import implausible_cases
from triaudit.results.reading import Reading
from triaudit.results.runs import gpu_identity, read_run

BASE_COLUMNS = [
    "card",
    "run",
    "file",
    "corner",
    "op",
    "variant",
    "case",
    "metric",
    "median",
    "min",
    "max",
    "spread_pct",
    "reps",
    "status",
    "message",
]
_NUMERIC = ("median", "min", "max", "spread_pct")


@dataclass
class ResultSet:
    """The rows of some result files and what the rows do not hold. Passed to the report's
    sections, to export and to outliers as it is (no side channel on the DataFrame)."""

    table: pd.DataFrame
    contexts: dict[str, dict] = field(default_factory=dict)  # result file -> its JSON context
    runs: dict = field(default_factory=dict)  # run folder -> RunInfo (results/runs.py)
    notes: list[str] = field(default_factory=list)  # what was skipped, warnings about files
    shown: dict[str, list[str]] = field(default_factory=dict)  # a report column -> the runs behind it

    def with_table(self, table: pd.DataFrame) -> ResultSet:
        """The same set with other rows (a selection of these)."""
        return ResultSet(table, self.contexts, self.runs, self.notes, self.shown)


def card_of(context: dict) -> str:
    if not gpu_measured(context) and str(context.get("gpu_available", "")).strip().lower() == "false":
        return "no GPU"
    return canonical_gpu_name(str(context.get("gpu_name") or "")) or "unknown card"


@cache
def _parts(case: str) -> tuple[str, str, str, tuple]:
    parts = case.split("/")
    corner, op, variant = (parts + ["", "", ""])[:3]
    args = []
    for p in parts[3:]:
        key, sep, value = p.partition(":")
        if sep:
            args.append((key, value))
    return corner, op, variant, tuple(args)


def _described_parts(case: str, info: dict | None) -> tuple[str, str, str, tuple]:
    """A case's corner, op, variant and axes: as its entry describes them (schema 2), else from its name."""
    got = axes_of(info)
    if got is None:
        return _parts(case)
    return (case.split("/", 1)[0], *got)


def name_parts(case: str) -> tuple[str, str, str, dict[str, str]]:
    corner, op, variant, args = _parts(case)
    return corner, op, variant, dict(args)


_METRIC_COLS = METRIC_COLS
# The columns that differ between the rows of one case in one file (one row per counter); every
# other column (card, run, the name's parts) is the case's and the file's.
ROW_COLUMNS = _METRIC_COLS


class _TextColumn:
    """A categorical column built file by file from (distinct values, codes) pairs."""

    def __init__(self):
        self.index: dict[str, int] = {}
        self.codes: list[np.ndarray] = []

    def add(self, uniques: list[str], codes: np.ndarray) -> None:
        lut = np.array([self.index.setdefault(u, len(self.index)) for u in uniques], dtype=np.int64)
        self.codes.append(lut[codes] if len(codes) else codes)

    def add_repeated(self, value: str, n: int) -> None:
        self.codes.append(np.full(n, self.index.setdefault(value, len(self.index)), dtype=np.int64))

    def categorical(self) -> pd.Categorical:
        """Categories sorted (as pd.Categorical of the values would be: groupby and pivot order by them)."""
        codes = np.concatenate(self.codes) if self.codes else np.zeros(0, dtype=np.int64)
        values = list(self.index)
        order = sorted(range(len(values)), key=values.__getitem__)
        lut = np.full(len(values) + 1, -1, dtype=np.int64)  # the last entry: code -1 (missing) stays -1
        lut[order] = np.arange(len(values))
        return pd.Categorical.from_codes(lut[codes], categories=[values[i] for i in order])


def _take(column: pd.Series, rows: np.ndarray):
    """column.take(rows) as an array; a categorical by its codes (its categories shared)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return pd.Categorical.from_codes(column.cat.codes.to_numpy()[rows], dtype=column.dtype)
    return column.to_numpy()[rows]


def _derived(cases, per_case: list) -> pd.Categorical:
    """A column whose value is a function of the case name, given per category of `cases`."""
    return recode(cases.codes.to_numpy(), per_case)


def load_table(paths: Iterable[str | Path], reading: Reading | None = None) -> pd.DataFrame:
    """The rows of every result file under `paths` (load_results(...).table)."""
    return load_results(paths, reading).table


def load_results(paths: Iterable[str | Path], reading: Reading | None = None) -> ResultSet:
    """Loads every result file under `paths` into one tidy table, with each file's JSON context
    (L2 size, peak bandwidth, ...), each run folder's RunInfo and what was skipped; `reading`, when
    given, is the reading of those files already under way (Reading.start(paths))."""
    if reading is None:
        reading = Reading.start(paths)
    whole = getattr(reading, "result_set", None)
    if whole is not None:  # a results store's reading (store/source.py): its table is made at once
        return whole()
    notes = list(reading.notes)
    contexts: dict[str, dict] = {}
    runs: dict = {}
    # Read file by file, keeping only the compact columns (the parsed runs of 100 cards would
    # not fit the memory budget). A case two files of one run and GPU both report is found as the
    # second one arrives and fixed up at the end.
    owner: dict[tuple, str] = {}
    conflicts: dict[tuple[str, str], str] = {}
    per_case = {c: _TextColumn() for c in ("card", "run", "file", "run_dir", "case", "provenance")}
    described: dict[str, dict] = {}  # case -> what its entries say of it (schema 2), the first file's
    complete: list[np.ndarray] = []
    text = {c: _TextColumn() for c in TEXT_COLS}
    numbers: dict[str, list] = {c: [] for c in _METRIC_COLS if c not in TEXT_COLS}
    takes: list = []
    n_cases = 0
    for path, context, file_notes, case_names, cols in reading:
        f = str(path)
        contexts[f] = context
        notes.extend(file_notes)
        run_dir = str(path.parent)
        run = runs.get(run_dir)
        if run is None:
            run = runs[run_dir] = read_run(path.parent, [context])
            if run.manifest_note:
                notes.append(run.manifest_note)
        card = card_of(context)
        key_base = (run_dir, card, gpu_identity(context, run, path.name))
        for case in case_names:
            other = owner.setdefault((*key_base, case), f)
            if other != f:
                msg = f"conflict: {case} is in both {Path(other).name} and {path.name} of one run"
                conflicts[(f, case)] = conflicts[(other, case)] = msg
        n = len(case_names)
        prov = provenance(context)
        for col, v in (("card", card), ("run", run.name), ("file", f), ("run_dir", run.run_dir), ("provenance", prov)):
            per_case[col].add_repeated(v, n)
        for case, info in zip(case_names, cols.get("info") or ()):
            if info is not None:
                described.setdefault(case, info)
        complete.append(np.full(n, bool(run.complete)))
        per_case["case"].add(case_names, np.arange(n))
        takes.append(np.frombuffer(cols["take"], dtype=np.int64) + n_cases)
        n_cases += n
        for c in TEXT_COLS:
            text[c].add(*cols[c])
        for c in numbers:
            numbers[c].append(np.frombuffer(cols[c], dtype=np.float64 if c in _NUMERIC else np.int64))
    parts = Parts(
        {c: col.categorical() for c, col in per_case.items()},
        np.concatenate(complete) if complete else np.zeros(0, dtype=bool),
        described,
        np.concatenate(takes) if takes else np.zeros(0, dtype=np.int64),
        text,
        numbers,
    )
    del per_case
    return ResultSet(assemble(parts, conflicts, contexts), contexts, runs, notes)


@dataclass
class Parts:
    """The table before it is assembled: one entry per (file, case) in `cases` (card, run, file,
    run_dir, case, provenance: categoricals) and `complete`; one per row in `take` (its (file, case)
    entry) and the metric columns, `text` (metric, status, message: categoricals, or _TextColumns)
    and `numbers` (arrays, or lists of them); `described`: case -> its schema-2 description, the
    first file's. load_results collects them file by file; the results store (store/) in bulk.
    assemble() takes the metric columns out of it as it goes (a fleet's table is not held twice)."""

    cases: dict[str, pd.Categorical]
    complete: np.ndarray
    described: dict[str, dict]
    take: np.ndarray
    text: dict
    numbers: dict


def _column(x):
    """A metric column of Parts, whole: a _TextColumn's categorical, a list of arrays joined."""
    if isinstance(x, _TextColumn):
        return x.categorical()
    return np.concatenate(x) if isinstance(x, list) else x


def assemble(parts: Parts, conflicts: dict[tuple[str, str], str], contexts: dict[str, dict]) -> pd.DataFrame:
    """The tidy table from its parts: the name's parts and axes as columns (from each case's
    description where it has one), the conflicts and the figures no card can produce as error rows."""
    take, described = parts.take, parts.described
    text, numbers = parts.text, parts.numbers  # taken column by column: the frame is not held twice
    # Text columns are categorical: a hundred cards' million rows hold a few thousand distinct
    # names, and comparing, grouping and copying small integer codes is what keeps a report fast.
    cases = pd.DataFrame(parts.cases)
    cases["complete"] = parts.complete
    if len(cases):
        names = cases["case"].cat
        named = [_described_parts(c, described.get(c)) for c in names.categories]
        cases["corner"] = _derived(names, [p[0] for p in named])
        cases["op"] = _derived(names, [p[1] for p in named])
        cases["variant"] = _derived(names, [p[2] for p in named])
        argdicts = [dict(p[3]) for p in named]
        keys: dict[str, None] = {}
        # In the order the rows first name them (the column order of the table and of tidy.csv).
        for code in pd.unique(names.codes):
            for k in argdicts[code]:
                keys.setdefault(k)
        for k in keys:
            if k not in cases.columns:
                cases[k] = _derived(names, [a.get(k) for a in argdicts])
        if described:  # schema 2: the counter each case is judged on, its scope, its headline tag
            for k in ("judged", "scope", "headline"):
                cases[k] = _derived(names, [str((described.get(c) or {}).get(k) or "") for c in names.categories])
    front = BASE_COLUMNS + ["complete", "run_dir"]
    if len(take):
        # Each column once, in its final place: a frame of a million rows grown a column at a
        # time, then put in order, was copied whole twice.
        got: dict[str, object] = {c: _take(cases[c], take) for c in cases.columns}
        for c in _METRIC_COLS:
            got[c] = _column(text.pop(c) if c in TEXT_COLS else numbers.pop(c))
        df = pd.DataFrame({c: got[c] for c in front + [c for c in got if c not in front]}, copy=False)
    else:
        df = cases.iloc[0:0]
        for c in _METRIC_COLS:
            df[c] = pd.Series(dtype="float64" if c in _NUMERIC else "object")
    for c in BASE_COLUMNS + ["run_dir", "complete"]:
        if c not in df.columns:
            df[c] = pd.Series(dtype="float64" if c in _NUMERIC else "object")
    # A case two files of one run both report, and a figure no card can produce, become one
    # error row each (results/plausible.py), never a number.
    errors = dict(conflicts)
    for key, why in implausible_cases(df, contexts).items():
        errors.setdefault(key, why)
    if errors:
        df = _as_errors(df, errors)
    order = front + [c for c in df.columns if c not in front]
    if list(df.columns) != order:
        df = df[order]
    return df


def _as_errors(df: pd.DataFrame, errors: dict[tuple[str, str], str]) -> pd.DataFrame:
    """The table with each (file, case) of `errors` as one error row carrying its message."""
    # Only the rows of the files and cases named are paired up (a million-row table has a few).
    near = np.flatnonzero(
        df["file"].isin({f for f, _ in errors}).to_numpy() & df["case"].isin({c for _, c in errors}).to_numpy()
    )
    pairs = list(zip(df["file"].to_numpy()[near].astype(str), df["case"].to_numpy()[near].astype(str)))
    hit = np.zeros(len(df), dtype=bool)
    first = np.zeros(len(df), dtype=bool)
    seen: set[tuple[str, str]] = set()
    messages = []
    for row, key in zip(near, pairs):
        if key in errors:
            hit[row] = True
            if key not in seen:
                seen.add(key)
                first[row] = True
                messages.append(errors[key])
    keep = ~hit | first
    df = df[keep].copy()
    where = first[keep]
    for col, v in (("metric", [""]), ("status", ["error"]), ("message", messages)):
        if isinstance(df[col].dtype, pd.CategoricalDtype):
            new = sorted(set(v) - set(df[col].cat.categories))
            if new:  # still sorted, as every text column's categories are (_TextColumn)
                df[col] = df[col].cat.set_categories(sorted([*df[col].cat.categories, *new]))
    for col, value in (
        ("metric", ""),
        ("median", math.nan),
        ("min", math.nan),
        ("max", math.nan),
        ("spread_pct", math.nan),
        ("reps", 0),
        ("status", "error"),
    ):
        df.loc[where, col] = value
    df.loc[where, "message"] = messages
    return df.reset_index(drop=True)


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its categorical text columns as plain text. load_table's columns are
    categorical (fast to filter and group); the analysis code receives a slice of them as plain
    text, which behaves as strings do in every operation (concatenation, map, fillna, min)."""
    cats = [c for c, t in frame.dtypes.items() if isinstance(t, pd.CategoricalDtype)]
    if not cats:
        return frame
    out = frame.copy(deep=False)
    for c in cats:
        out[c] = _as_text(frame[c])
    return out


def records(frame: pd.DataFrame) -> list[dict]:
    """frame.to_dict("records"): a dict per row, numbers as Python numbers, text as str, missing as
    NaN. Made a column at a time: pandas goes through text columns value by value, which over a
    report's per-row loops was a tenth of its sections' time."""
    if not frame.columns.is_unique:
        return frame.to_dict("records")
    columns = list(frame.columns)
    values = [frame[c].to_numpy(dtype=object) for c in columns]
    return [dict(zip(columns, row)) for row in zip(*values)]


def _as_text(s: pd.Series) -> pd.Series:
    """A categorical text column as the text column it would be (dtype "str", NaN where missing):
    the categories taken by the codes. (astype() gets there through a per-call path ten times slower.)"""
    dtype = s.cat.categories.dtype
    if not isinstance(dtype, pd.StringDtype) or dtype.storage != "python":
        return s.astype(dtype)
    values = np.append(np.asarray(s.cat.categories, dtype=object), np.nan).take(s.cat.codes.to_numpy())
    return pd.Series(pd.arrays.StringArray(values, dtype=dtype), index=s.index, name=s.name)


def card_contexts(df: pd.DataFrame, contexts: dict[str, dict]) -> dict[str, dict]:
    """One context per card column of `df` (the last file's of `contexts`), for L2 size and peak bandwidth."""
    out: dict[str, dict] = {}
    if df.empty or "file" not in df:
        for ctx in contexts.values():
            out[card_of(ctx)] = ctx
        return out
    # The first row of each file (a hundred cards' million rows, several times a report): among the
    # rows where the file changes, the first of each file.
    if isinstance(df["file"].dtype, pd.CategoricalDtype):
        codes, files = df["file"].cat.codes.to_numpy(), df["file"].cat.categories
    else:
        codes, files = pd.factorize(df["file"], sort=False)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    seen, first = np.unique(codes[starts], return_index=True)
    cards = df["card"]
    for code, pos in zip(seen.tolist(), starts[first].tolist()):
        if code >= 0 and files[code] in contexts:
            out[cards.iat[pos]] = contexts[files[code]]
    return out
