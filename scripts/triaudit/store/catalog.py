"""What a store holds: every run it indexes, the newest version of each, and the Parquet files its
rows are in. Read from the `runs` dataset alone (a row per run: a year of a fleet is a few hundred
thousand rows), so choosing runs never opens a result file's rows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.store.engine import parquet_list, table
from triaudit.store.layout import FORMAT, Store


class StoreUnusable(TriauditError):
    """A store this triaudit cannot read (another format, a damaged file): readers take the JSON files."""


@dataclass(frozen=True)
class StoredRun:
    rel: str  # the run folder, as the store names it
    version: int  # the folder's modification time when it was added
    partition: str  # card=<card>/night=<night>
    part: str  # the file name its rows have in each dataset
    row: dict  # its `runs` row

    def path(self, store: Store, dataset: str) -> Path:
        return store.dataset(dataset) / self.partition / self.part


# What a reader needs of every run in its scope (to choose runs and say what it left out); the
# rest of a run's row is read once it loads the run (source.py Source.complete): a year of a fleet is
# hundreds of thousands of rows, and those columns are most of their bytes.
LIGHT = (
    "run_dir",
    "version",
    "ingested_ns",
    "format",
    "name",
    "started",
    "complete",
    "manifest_note",
    "file_notes",
    "scan_notes",
    "gate_hosts",
    "no_gpu",
    "n_files",
)
HEAVY = (
    "file_names",
    "gpu_files",
    "node_level_files",
    "descriptions",
    "host",
    "git_commit",
    "card_name",
    "started_recorded",
)


def part_files(store: Store, dataset: str) -> list[Path]:
    """The dataset's Parquet files (never a hidden one: a write under way)."""
    return sorted(p for p in store.dataset(dataset).glob("card=*/night=*/*.parquet") if not p.name.startswith("."))


def read_catalog(store: Store) -> dict[str, StoredRun]:
    """The store's runs, the newest version of each (a run added again after its folder changed);
    of two copies of one version (a night being merged) the merged one."""
    meta = store.meta()
    if meta.get("format") not in (None, FORMAT):
        raise StoreUnusable(
            f"{store.dir}: format {meta.get('format')}, this triaudit reads {FORMAT} "
            f"(triaudit store rebuild {store.root})"
        )
    files = part_files(store, "runs")
    if not files:
        return {}
    try:
        rows = table(
            f"SELECT {', '.join(LIGHT)}, filename FROM read_parquet({parquet_list(files)}, filename=true, union_by_name=true)"
        ).to_pylist()
    except Exception as exc:  # a damaged or vanished file (merged meanwhile): said, and the JSON files read
        raise StoreUnusable(f"{store.dir}: cannot be read ({str(exc).splitlines()[0]})") from None
    formats = {r.get("format") for r in rows}
    if formats != {FORMAT}:
        raise StoreUnusable(
            f"{store.dir}: holds format(s) {sorted(map(str, formats))}, this triaudit reads {FORMAT} "
            f"(triaudit store rebuild {store.root})"
        )
    best: dict[str, tuple] = {}
    for r in rows:
        path = Path(r.pop("filename"))
        key = (r["version"], r["ingested_ns"], path.name.startswith("c-"), path.name)
        have = best.get(r["run_dir"])
        if have is None or key > have[0]:
            best[r["run_dir"]] = (key, path, r)
    out = {}
    for rel, (_key, path, r) in best.items():
        out[rel] = StoredRun(rel, r["version"], f"{path.parent.parent.name}/{path.parent.name}", path.name, r)
    return out
