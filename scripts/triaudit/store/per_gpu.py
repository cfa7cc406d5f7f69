"""`outliers` from the store: each GPU's median per case computed in DuckDB (store/sql.py), in the
shape judge/outliers.py per_gpu_table gives from the tidy table, so the same judge() decides. Which
counter each case is judged on is decided here by outliers' own rule (its _primary), from the
distinct (case, counter) pairs the runs hold; the `--cases` expression is Python's.
"""

from __future__ import annotations

import re

import pandas as pd
import pyarrow as pa

from triaudit.results.counters import JUDGED
from triaudit.store.engine import connection, quote, table
from triaudit.store.layout import RUN_MARK
from triaudit.store.load import query, sources_sql
from triaudit.store.sql import KEYS, per_gpu_sql

_ORDER = {m: i for i, (m, _) in enumerate(JUDGED)}
_HIGHER = dict(JUDGED)
_COLUMNS = (
    "file, row_in_file, case_name, metric, median, status, message, per_gpu, model, driver, gpu, host, "
    "gpu_index, gpu_uuid, siblings_loaded"
)


def per_gpu(source, cases: str = "") -> tuple[pd.DataFrame, list[str]]:
    """(one row per GPU and case: its median and how many files, as per_gpu_table; notes on the
    cases a GPU did not measure) for every run of a store Source."""
    runs = source.runs
    sql = sources_sql(source.store, runs, "tidy", _COLUMNS, "per_gpu")
    if sql is None:
        return pd.DataFrame(), []
    con = connection()
    ranked = source.ordered(runs)
    con.register(
        "_rank",
        pa.table({"file": [r.rel(n) for r, n in ranked], "file_rank": pa.array(range(len(ranked)), pa.int64())}),
    )
    wanted = "(" + ", ".join(quote(m) for m in _ORDER) + ")"
    pairs = con.sql(
        f"SELECT DISTINCT case_name, metric FROM ({sql}) WHERE status = 'ok' AND metric IN {wanted}"
    ).fetchall()
    pattern = re.compile(cases) if cases else None
    best: dict[str, str] = {}
    for case, metric in pairs:
        if pattern is not None and not pattern.search(case):
            continue
        if case not in best or _ORDER[metric] < _ORDER[best[case]]:
            best[case] = metric
    notes = _notes(con, sql, pattern, {r.rel(n): r for r, n in ranked})
    if not best:
        return pd.DataFrame(), notes
    con.register(
        "_judged",
        pa.table(
            {
                "case_name": list(best),
                "metric": list(best.values()),
                "higher_better": [bool(_HIGHER[m]) for m in best.values()],
            }
        ),
    )
    first = f"""
        SELECT t.gpu, t.case_name, t.metric, ARG_MIN(t.siblings_loaded, r.file_rank) AS siblings_loaded
        FROM ({sql}) t JOIN _rank r ON t.file = r.file JOIN _judged j ON t.case_name = j.case_name AND t.metric = j.metric
        WHERE t.status = 'ok' GROUP BY t.gpu, t.case_name, t.metric"""
    got = table(
        f"SELECT p.*, f.siblings_loaded FROM ({per_gpu_sql(f'({sql})', '_judged')}) p "
        f"JOIN ({first}) f ON p.gpu = f.gpu AND p.case_name = f.case_name AND p.metric = f.metric"
    ).to_pandas()
    # A GPU that recorded no UUID is keyed by its run's folder: spelled as the command's paths spell it.
    spelled = {}
    marked = query(source.store, runs, "files", "run_dir, gpu", f"per_gpu AND contains(gpu, {quote(RUN_MARK)})")
    if marked is not None and marked.num_rows:
        by_rel = {r.rel_dir: r for r in runs}
        for rel, raw in zip(marked.column("run_dir").to_pylist(), marked.column("gpu").to_pylist()):
            if rel in by_rel:
                spelled[raw.replace(RUN_MARK, rel)] = by_rel[rel].text(raw)
    if spelled:
        got["gpu"] = got["gpu"].map(lambda g: spelled.get(g, g))
    keys = KEYS.replace("case_name", "case").split(", ")
    got = got.rename(columns={"case_name": "case"})
    per = pd.DataFrame(
        {
            **{k: got[k].astype(str).tolist() for k in keys if k != "higher_better"},
            "higher_better": got["higher_better"].astype(bool).tolist(),
            "value": got["value"].astype(float).tolist(),
            "files": got["files"].astype("int64").tolist(),
            "siblings_loaded": got["siblings_loaded"].astype(str).tolist(),
        }
    )
    per = per[[*keys, "value", "files", "siblings_loaded"]]
    return per.sort_values(keys, kind="stable").reset_index(drop=True), notes


def _notes(con, sql: str, pattern, run_of: dict) -> list[str]:
    """outliers' notes on cases a GPU did not measure, as per_gpu_table says them."""
    bad = table(
        f"SELECT t.file, t.row_in_file, t.case_name AS case, t.status, t.message, t.host, t.gpu_index, r.file_rank "
        f"FROM ({sql}) t JOIN _rank r ON t.file = r.file WHERE t.status <> 'ok'"
    ).to_pandas()
    if bad.empty:
        return []
    if pattern is not None:
        bad = bad[[bool(pattern.search(c)) for c in bad["case"]]]
    bad = bad.sort_values(["file_rank", "row_in_file"], kind="stable")
    notes = []
    for (host, idx, status), g in bad.groupby(["host", "gpu_index", "status"]):
        message = str(g["message"].iloc[0])
        if RUN_MARK in message:
            message = run_of[g["file"].iloc[0]].text(message)
        notes.append(f"{host} GPU {idx}: {len(g)} case(s) {status}, e.g. `{g['case'].iloc[0]}`: {message}")
    return notes
