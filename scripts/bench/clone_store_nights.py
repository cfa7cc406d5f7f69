"""A results store for a fleet of many nights made by make_synthetic_fleet.py --link-nights, without
adding every night: the nights after the first hold the first night's result files (hard links), so
what adding them would write is the first night's rows with each run's folder, stamp, name and
version (its folder's modification time) changed. This writes that, one merged file per dataset and
night, and checks it against adding a few runs of the second night for real (every column but the
time of adding equal). Not a test; for timing readers over a year of a large fleet.

    python scripts/bench/make_synthetic_fleet.py /tmp/f --hosts 1024 --nights 30 --link-nights
    python -m triaudit store update /tmp/f/nvidia-h100-80gb-hbm3/<first night's runs...>   # or: see below
    python scripts/bench/clone_store_nights.py /tmp/f --first 20261101T020000Z
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from pathlib import Path

import pyarrow as pa

from triaudit.store.catalog import read_catalog
from triaudit.store.engine import connection, parquet_list, quote, table
from triaudit.store.ingest import add_run
from triaudit.store.layout import Store, night_of

REWRITE = {
    "runs": ("run_dir", "name", "started", "started_recorded"),
    "files": ("run_dir", "file"),
    "tidy": ("run_dir", "file", "run"),
    "samples": ("run_dir", "file"),
}
_STAMP = re.compile(r"^\d{8}T\d{6}Z")


def clone(root: Path, first: str, check: int = 4) -> int:
    store = Store(root)
    catalog = read_catalog(store)
    firsts = {rel: r for rel, r in catalog.items() if Path(rel).name.startswith(first)}
    if not firsts:
        raise SystemExit(f"no run of {first} in {store.dir}: add the first night first (triaudit store update)")
    nights: dict[str, list[tuple[str, str]]] = {}  # stamp -> (new run folder, first night's)
    for rel in firsts:
        card, name = rel.rsplit("/", 1)
        host = name[len(first) :]
        for other in (root / card).glob(f"*{host}"):
            m = _STAMP.match(other.name)
            if m and m.group(0) != first and f"{card}/{other.name}" not in catalog:
                nights.setdefault(m.group(0), []).append((f"{card}/{other.name}", rel))
    con = connection()
    for stamp, pairs in sorted(nights.items()):
        versions = {new: os.stat(root / new).st_mtime_ns for new, _ in pairs}
        con.register(
            "_clone",
            pa.table(
                {
                    "old_dir": [old for _, old in pairs],
                    "old_version": pa.array([firsts[old].version for _, old in pairs], pa.int64()),
                    "new_dir": [new for new, _ in pairs],
                    "new_version": pa.array([versions[new] for new, _ in pairs], pa.int64()),
                }
            ),
        )
        for ds, columns in REWRITE.items():
            sources = sorted({str(firsts[old].path(store, ds)) for _, old in pairs})
            sources = [s for s in sources if Path(s).exists()]
            if not sources:
                continue
            replaced = ", ".join(f"replace({c}, {quote(first)}, {quote(stamp)}) AS {c}" for c in columns)
            part = store.dataset(ds) / firsts[pairs[0][1]].partition.replace(night_of(first), night_of(stamp))
            part.mkdir(parents=True, exist_ok=True)
            target = part / f"c-clone-{stamp}.parquet"
            con.sql(
                f"COPY (SELECT t.* REPLACE ({replaced}, c.new_version AS version) FROM read_parquet({parquet_list(sources)}) t "
                f"JOIN _clone c ON t.run_dir = c.old_dir AND t.version = c.old_version) "
                f"TO {quote(str(target))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 131072)"
            )
        print(f"{stamp}: {len(pairs)} run(s) cloned", flush=True)
    return _check(root, store, nights, check)


def _check(root: Path, store: Store, nights: dict, n: int) -> int:
    """Adds `n` runs of the second night for real into a scratch store; their rows must equal the clones'."""
    if not nights:
        return 0
    stamp = sorted(nights)[0]
    with tempfile.TemporaryDirectory() as tmp:
        real = Store(root)
        real.dir = Path(tmp) / ".triaudit-store"
        for new, _ in nights[stamp][:n]:
            add_run(real, root / new)
        cloned = {rel: r for rel, r in read_catalog(store).items() if rel in {x for x, _ in nights[stamp][:n]}}
        made = read_catalog(real)
        for ds in REWRITE:
            for rel, r in made.items():
                a = _rows(real, r, ds)
                b = _rows(store, cloned[rel], ds)
                if a != b:
                    raise SystemExit(f"{ds} of {rel}: the clone differs from adding it")
    print(f"checked: {n} run(s) of {stamp} added for real equal their clones in every dataset", flush=True)
    return 0


def _rows(store: Store, r, ds: str) -> list:
    path = r.path(store, ds)
    if not path.exists():
        return []
    got = table(
        f"SELECT * EXCLUDE (ingested_ns) FROM read_parquet({quote(str(path))}) WHERE run_dir = {quote(r.rel)} "
        f"ORDER BY ALL"
    ).to_pylist()
    return got


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path)
    p.add_argument("--first", required=True, help="the first night's stamp, e.g. 20261101T020000Z")
    p.add_argument("--check", type=int, default=4, help="runs of the second night added for real and compared")
    a = p.parse_args(argv)
    return clone(a.results, a.first, a.check)


if __name__ == "__main__":
    raise SystemExit(main())
