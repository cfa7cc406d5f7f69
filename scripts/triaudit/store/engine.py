"""The embedded engine (DuckDB) and the Parquet writer (pyarrow): optional. A bare GPU machine runs
`triaudit run` without them; then no store is written there (said once) and every reader takes the
JSON files, as before the store existed."""

from __future__ import annotations

import os

_WHY: str | None = None
_CON = None
# DuckDB's own memory (it spills past it): the gate over 8,192 GPUs fits in a gigabyte with this.
MEMORY = "256MB"


def missing() -> str:
    """ "" when DuckDB and pyarrow can be imported; otherwise what is missing, in words."""
    global _WHY
    if _WHY is None:
        gone = []
        for name in ("pandas", "pyarrow.parquet", "duckdb"):  # what adding and reading runs import
            try:
                __import__(name)
            except ImportError as exc:
                gone.append(f"{name.split('.')[0]} ({exc})")
        _WHY = f"cannot import {', '.join(gone)}; pip install duckdb pyarrow" if gone else ""
    return _WHY


def connection():
    """This process's DuckDB connection (in memory: the store's files are its only data)."""
    global _CON
    if _CON is None:
        import duckdb

        _CON = duckdb.connect(config={"threads": max(1, min(os.cpu_count() or 1, 8)), "memory_limit": MEMORY})
    return _CON


def quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def parquet_list(paths) -> str:
    """read_parquet's list argument for these files."""
    return "[" + ", ".join(quote(str(p)) for p in paths) + "]"


def table(sql: str):
    """The rows of `sql` as one Arrow table."""
    return arrow(connection().sql(sql))


def arrow(rel):
    """A DuckDB relation's rows as one Arrow table (DuckDB 1.x and 2.x name the call differently)."""
    to = getattr(rel, "to_arrow_table", None)
    return to() if to is not None else rel.arrow()


def batches(sql: str, rows: int):
    """The rows of `sql` as an Arrow RecordBatchReader of `rows` rows a batch."""
    rel = connection().sql(sql)
    to = getattr(rel, "to_arrow_reader", None)
    return to(rows) if to is not None else rel.fetch_record_batch(rows)
