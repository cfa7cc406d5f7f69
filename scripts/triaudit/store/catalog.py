"""What a store holds: every run it indexes, the newest version of each, and the Parquet files its
rows are in. Read from the `runs` dataset alone (a row per run: a year of a fleet is a few hundred
thousand rows), so choosing runs never opens a result file's rows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.store.engine import arrow, connection, parquet_list, quote, table
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


def _check_meta(store: Store) -> None:
    """A store.json of another format: the store is left to `store rebuild`, the JSON files read."""
    meta = store.meta()
    if meta.get("format") not in (None, FORMAT):
        raise StoreUnusable(
            f"{store.dir}: format {meta.get('format')}, this triaudit reads {FORMAT} "
            f"(triaudit store rebuild {store.root})"
        )


def _check_rows(store: Store, got) -> None:
    """`runs` rows written by another format (a store half rebuilt by another triaudit)."""
    formats = set(got.column("format").unique().to_pylist())
    if formats != {FORMAT}:
        raise StoreUnusable(
            f"{store.dir}: holds format(s) {sorted(map(str, formats))}, this triaudit reads {FORMAT} "
            f"(triaudit store rebuild {store.root})"
        )


def read_catalog(store: Store) -> dict[str, StoredRun]:
    """The store's runs, the newest version of each (a run added again after its folder changed);
    of two copies of one version (a night being merged) the merged one."""
    _check_meta(store)
    files = part_files(store, "runs")
    if not files:
        return {}
    try:
        got = table(
            f"SELECT {', '.join(LIGHT)}, filename FROM read_parquet({parquet_list(files)}, filename=true, union_by_name=true)"
        )
    except Exception as exc:  # a damaged or vanished file (merged meanwhile): said, and the JSON files read
        raise StoreUnusable(f"{store.dir}: cannot be read ({str(exc).splitlines()[0]})") from None
    _check_rows(store, got)
    return _stored(got)


def _stored(got) -> dict[str, StoredRun]:
    """StoredRuns of a table of `runs` rows (LIGHT and filename), the newest version of each."""
    # Columns to Python once, rows zipped from them: a year of a fleet is hundreds of thousands of
    # rows, and the paths are cut as text (pathlib costs microseconds a path).
    columns = got.to_pydict()
    del got
    where = columns.pop("filename")
    keys = list(columns)
    best: dict[str, tuple] = {}
    for values, path in zip(zip(*columns.values()), where):
        r = dict(zip(keys, values))
        folder, _, name = path.rpartition("/")
        key = (r["version"], r["ingested_ns"], name.startswith("c-"), name)
        have = best.get(r["run_dir"])
        if have is None or key > have[0]:
            best[r["run_dir"]] = (key, folder, r)
    out = {}
    for rel, (key, folder, r) in best.items():
        above, _, night = folder.rpartition("/")
        out[rel] = StoredRun(rel, r["version"], f"{above.rpartition('/')[2]}/{night}", key[3], r)
    return out


# What makes a run's row worth reading whatever its age: something a reader says of it.
NOTED = "no_gpu <> '[]' OR file_notes <> '[]' OR scan_notes <> '[]' OR coalesce(manifest_note, '') <> ''"
KEEP_NAMES = 4  # gate_facts.newest_runs names a host's newest run and the three before it


@dataclass
class Newest:
    """What the gate needs of the runs under one folder of a store (read_newest): each host's
    newest run and every run something is said of (`kept`), every run folder (`every`), and for
    each host the number of its runs and the names of its newest KEEP_NAMES, oldest first."""

    kept: dict[str, StoredRun]
    every: set[str]
    hosts: dict[str, tuple[int, list[str]]]


def read_newest(store: Store, scope: str) -> Newest | None:
    """read_catalog for the gate: the runs under `scope` (a store path) it judges or says something
    of, chosen by the engine, so that a year of nights costs what one does. Each host's newest is
    the newest by start, name and folder (gate_facts.newest_runs' order, which the gate applies
    again to what is kept). None when the store holds no run there."""
    _check_meta(store)
    files = part_files(store, "runs")
    if not files:
        return None
    where = "TRUE" if scope == "." else f"(run_dir = {quote(scope)} OR starts_with(run_dir, {quote(scope + '/')}))"
    import pyarrow as pa
    import pyarrow.compute as pc

    con = connection()
    name = f"triaudit_newest_{id(store)}"
    try:
        got = table(
            f"SELECT {', '.join(LIGHT)}, filename FROM read_parquet({parquet_list(files)}, filename=true, "
            f"union_by_name=true) WHERE {where}"
        )
        if pc.count_distinct(got.column("run_dir")).as_py() < got.num_rows:
            # A run in two files (added again after its folder changed; a night being merged): its
            # newest version, the merged copy of one version (read_catalog's order).
            con.register(name, got)
            try:
                got = arrow(
                    con.sql(
                        f"SELECT * FROM {name} QUALIFY row_number() OVER (PARTITION BY run_dir ORDER BY "
                        "version DESC, ingested_ns DESC, starts_with(parse_filename(filename), 'c-') DESC, "
                        "parse_filename(filename) DESC) = 1"
                    )
                )
            finally:
                con.unregister(name)
    except Exception as exc:  # a damaged or vanished file (merged meanwhile): said, and the JSON files read
        raise StoreUnusable(f"{store.dir}: cannot be read ({str(exc).splitlines()[0]})") from None
    if got.num_rows == 0:
        return None
    _check_rows(store, got)
    con.register(name, got)
    try:
        # Per host: its number of runs, the names of its newest KEEP_NAMES and its newest folder, by
        # (start, name, folder) as newest_runs orders them.
        ranked = con.sql(
            f"SELECT host, count(*), max_by(name, (started, name, run_dir), {KEEP_NAMES}), "
            "max_by(run_dir, (started, name, run_dir)) FROM (SELECT run_dir, started, name, "
            f"unnest(json_extract_string(gate_hosts, '$[*]')) AS host FROM {name}) GROUP BY host"
        ).fetchall()
        noted = {r[0] for r in con.sql(f"SELECT run_dir FROM {name} WHERE {NOTED}").fetchall()}
    finally:
        con.unregister(name)
    hosts: dict[str, tuple[int, list[str]]] = {}
    wanted = set(noted)
    for host, n, names, newest in ranked:
        hosts[host] = (n, names[::-1])  # oldest first
        wanted.add(newest)
    every = got.column("run_dir").to_pylist()
    kept = _stored(got.filter(pc.is_in(got.column("run_dir"), pa.array(sorted(wanted), pa.string()))))
    return Newest(kept, set(every), hosts)
