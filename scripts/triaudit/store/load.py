"""Loading runs from the store into the tidy table: the rows of the runs chosen, only the counters a
command reads (and every row that is not a number: errors, skips), in one query over their Parquet
files (and over the tables of runs just read from JSON), then the table assembled by the code that
assembles it from JSON (results/table.py assemble): the same columns, the same categories, the same
rows in the same order as load_results of those files.

The rows come in batches and each batch's text is turned into codes at once, so a fleet's text is
never held as millions of Python strings (the gate over 8,192 GPUs reads three million rows).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from triaudit.results.case_info import provenance
from triaudit.results.table import Parts, assemble, card_of
from triaudit.store.engine import batches, connection, parquet_list, quote, table
from triaudit.store.layout import RUN_MARK, Store

BATCH_ROWS = 1 << 20


def _loads(text: str) -> dict:
    try:
        import orjson

        return orjson.loads(text)
    except Exception:  # NaN in a context: the standard library reads what it wrote
        return json.loads(text)


class Contexts:
    """Reads contexts, sharing equal text values between them: a fleet's contexts repeat the same
    driver, model, versions and host facts tens of thousands of times (43,000 contexts of 8,192
    GPUs: 500 MB as parsed, a third of it shared)."""

    def __init__(self):
        self.pool: dict[str, str] = {}

    def loads(self, text: str) -> dict:
        ctx = _loads(text)
        if type(ctx) is not dict:
            return ctx
        pool = self.pool
        return {k: pool.setdefault(v, v) if type(v) is str else v for k, v in ctx.items()}


class PartGone(Exception):
    """A run's files were merged into another file (or removed) after the catalog was read: read it
    again (store/source.py does, once)."""


def sources_sql(store: Store, runs: list, dataset: str, columns: str, where: str = "TRUE") -> str | None:
    """SQL selecting `columns` from `dataset`'s rows of `runs` (store/source.py Run: from the store,
    each at its version; or read from JSON just now, registered as a table), None when none has any."""
    con = connection()
    parts: set[str] = set()
    keys_dir, keys_version = [], []
    for r in runs:
        if r.stored is not None:
            parts.add(str(r.stored.path(store, dataset)))
            keys_dir.append(r.stored.rel)
            keys_version.append(r.stored.version)
    pieces = []
    existing = sorted(p for p in parts if _exists(p))
    if len(existing) < len(parts):  # a run without rows here has no file; a merged one has no `runs` file
        for r in runs:
            if r.stored is not None and not _exists(str(r.stored.path(store, "runs"))):
                raise PartGone(r.stored.rel)
    if existing:
        con.register("_chosen", pa.table({"run_dir": keys_dir, "version": pa.array(keys_version, pa.int64())}))
        pieces.append(
            f"SELECT {columns} FROM read_parquet({parquet_list(existing)}, union_by_name=true) "
            f"WHERE ({where}) AND (run_dir, version) IN (SELECT run_dir, version FROM _chosen)"
        )
    memory = [r.tables[dataset] for r in runs if r.tables is not None and r.tables.get(dataset) is not None]
    if memory:
        con.register(f"_memory_{dataset}", pa.concat_tables(memory, promote_options="permissive"))
        pieces.append(f"SELECT {columns} FROM _memory_{dataset} WHERE ({where})")
    return " UNION ALL ".join(pieces) if pieces else None


def _exists(path: str) -> bool:
    import os

    return os.path.exists(path)


def query(store: Store, runs: list, dataset: str, columns: str, where: str = "TRUE") -> pa.Table | None:
    """sources_sql's rows as one Arrow table (small results: contexts, samples), order unspecified."""
    sql = sources_sql(store, runs, dataset, columns, where)
    return None if sql is None else table(sql)


class _Codes:
    """A text column gathered batch by batch as integer codes into values in order of appearance."""

    def __init__(self):
        self.index: dict[str, int] = {}
        self.codes: list[np.ndarray] = []

    def add(self, column) -> np.ndarray:
        enc = pc.dictionary_encode(column)
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        lut = np.array([self.index.setdefault(v, len(self.index)) for v in enc.dictionary.to_pylist()] + [-1], np.int32)
        if enc.indices.null_count:
            idx = enc.indices.fill_null(len(lut) - 1)
        else:
            idx = enc.indices
        self.codes.append(lut[idx.to_numpy(zero_copy_only=False)])
        return self.codes[-1]

    def values(self) -> list:
        return list(self.index)

    def joined(self) -> np.ndarray:
        return np.concatenate(self.codes) if self.codes else np.zeros(0, dtype=np.int32)


def _sorted_categorical(codes: np.ndarray, values: list) -> pd.Categorical:
    """Codes into `values` as a categorical with sorted categories (as _TextColumn makes them)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    lut = np.full(len(values) + 1, -1, dtype=np.int64)
    lut[order] = np.arange(len(values))
    return pd.Categorical.from_codes(lut[codes], categories=[values[i] for i in order])


def load_rows(store: Store, runs: list, contexts: dict, file_rank: dict, metrics: set[str] | None) -> pd.DataFrame:
    """The tidy table of `runs` (only the rows of `metrics`, and every row that is not ok, when given).
    `contexts`: each loaded file's, by the path the command's paths spell, in scan order; `file_rank`:
    store path of each file -> (its place in scan order, its path as spelled, its run's RunInfo)."""
    where = "TRUE"
    if metrics is not None:
        where = "status <> 'ok' OR metric IN (" + ", ".join(quote(m) for m in sorted(metrics)) + ")"
    columns = "file, row_in_file, case_name, metric, median, min, max, spread_pct, reps, status, message"
    sql = sources_sql(store, runs, "tidy", columns, where)
    if sql is None:
        return assemble(_empty_parts(), {}, contexts)
    text = {c: _Codes() for c in ("file", "case_name", "metric", "status", "message")}
    rows: list = []
    numbers: dict[str, list] = {c: [] for c in ("median", "min", "max", "spread_pct", "reps")}
    reader = batches(sql, BATCH_ROWS)
    for batch in reader:
        for c, codes in text.items():
            codes.add(batch.column(c))
        rows.append(batch.column("row_in_file").to_numpy(zero_copy_only=False).astype(np.int64))
        for c in numbers:
            numbers[c].append(batch.column(c).to_numpy(zero_copy_only=False))
    file_code = text["file"].joined()
    files = text["file"].values()
    known = [file_rank.get(f) for f in files]
    rank = np.array([k[0] if k is not None else -1 for k in known], dtype=np.int64)
    row_rank = rank[file_code] if len(file_code) else np.zeros(0, dtype=np.int64)
    row = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    keep = np.flatnonzero(row_rank >= 0)
    order = keep[np.argsort(row_rank[keep] * (int(row.max()) + 1 if len(row) else 1) + row[keep], kind="stable")]
    if not len(order):
        return assemble(_empty_parts(), {}, contexts)
    file_code = file_code[order]
    case_code = text["case_name"].joined()[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (file_code[1:] != file_code[:-1]) | (case_code[1:] != case_code[:-1])
    entries = np.flatnonzero(new)
    take = np.cumsum(new, dtype=np.int64) - 1
    entry_file = file_code[entries]
    case_names = text["case_name"].values()

    def per_entry(value_of) -> pd.Categorical:
        per_file = {code: value_of(known[code]) for code in np.unique(entry_file).tolist()}
        values = sorted(set(per_file.values()))
        where = {v: i for i, v in enumerate(values)}
        lut = np.full(len(files), -1, dtype=np.int64)
        for code, v in per_file.items():
            lut[code] = where[v]
        return pd.Categorical.from_codes(lut[entry_file], categories=values)

    cases = {
        "card": per_entry(lambda k: card_of(contexts[k[1]])),
        "run": per_entry(lambda k: k[2].name),
        "file": per_entry(lambda k: k[1]),
        "run_dir": per_entry(lambda k: k[2].run_dir),
        "case": _sorted_categorical(case_code[entries], case_names),
        "provenance": per_entry(lambda k: provenance(contexts[k[1]])),
    }
    complete = np.array([bool(known[c][2].complete) for c in range(len(files))] if files else [], dtype=bool)
    message_code = text["message"].joined()[order]
    messages = text["message"].values()
    if any(RUN_MARK in m for m in messages):  # a message naming its run's folder: spelled as the paths spell it
        marked = {i for i, m in enumerate(messages) if RUN_MARK in m}
        spelled = _Codes()
        pairs = [
            m if i not in marked else m.replace(RUN_MARK, known[f][2].run_dir)
            for i, f, m in ((i, f, messages[i]) for i, f in zip(message_code.tolist(), file_code.tolist()))
        ]
        message_code = spelled.add(pa.array(pairs))
        messages = spelled.values()
    parts = Parts(
        cases,
        complete[entry_file] if len(files) else np.zeros(0, dtype=bool),
        _described(runs, file_rank),
        take,
        {
            "metric": _sorted_categorical(text["metric"].joined()[order], text["metric"].values()),
            "status": _sorted_categorical(text["status"].joined()[order], text["status"].values()),
            "message": _sorted_categorical(message_code, messages),
        },
        {c: np.concatenate(v)[order].astype(np.int64 if c == "reps" else np.float64) for c, v in numbers.items()},
    )
    return assemble(parts, {}, contexts)


def _described(runs: list, file_rank: dict) -> dict[str, dict]:
    """Each case's schema-2 description: the first file's (in scan order) that has one, of every
    file of `runs` (as load_results takes it from every file it reads, whatever rows are kept):
    from each run's `descriptions` (store/rows.py), not from its rows."""
    best: dict[str, tuple[int, dict]] = {}
    for r in runs:
        for case, name, info in json.loads(r.row.get("descriptions") or "[]"):
            rank = file_rank.get(r.rel(name))
            if rank is not None and (case not in best or rank[0] < best[case][0]):
                best[case] = (rank[0], info)
    return {case: info for case, (_rank, info) in best.items()}


def _empty_parts() -> Parts:
    empty = pd.Categorical([])
    return Parts(
        {c: empty for c in ("card", "run", "file", "run_dir", "case", "provenance")},
        np.zeros(0, dtype=bool),
        {},
        np.zeros(0, dtype=np.int64),
        {c: empty for c in ("metric", "status", "message")},
        {c: np.zeros(0) for c in ("median", "min", "max", "spread_pct")} | {"reps": np.zeros(0, dtype=np.int64)},
    )
