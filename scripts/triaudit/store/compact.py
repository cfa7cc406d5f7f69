"""Keeping the store small and current: merging a night's files, adding what is missing, rebuilding.

- merge (compact): a night of a fleet is a file per run (a thousand nodes: a thousand files per
  dataset); reading many small files is most of a reader's time, so a night's files are merged into
  one per dataset, `c-<time>-<pid>.parquet`, written aside and renamed into place (the `runs` file
  last), and only then the merged files removed. A reader that meets both takes the merged copy; one
  whose file was removed under it reads again. One merger per night at a time (a lock folder,
  broken after an hour); runs whose folder is gone are dropped, the newest version of each run kept,
  leftovers of killed writes (hidden files, rows without their `runs` row) removed after an hour.
- update: every run folder under a path that the store lacks, or holds in an older version, is
  added; then each night touched, and every night holding a run whose folder is gone, is merged.
- rebuild: a new store made aside (`.triaudit-store.new-<pid>`) from the JSON folders, and swapped
  in by two renames; the old one removed after. An interrupted rebuild leaves the old store.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

from triaudit.core.io import interrupts
from triaudit.store.catalog import part_files, read_catalog
from triaudit.store.engine import connection, parquet_list, quote, table
from triaudit.store.ingest import add_run, direct_files, ensure_store
from triaudit.store.layout import DATASETS, STORE_DIR, Store, find_store

STALE_S = 3600  # a lock, or a half-written file, older than this was left by a process that died


def _lock(store: Store, partition: str) -> Path | None:
    """This process's lock on one night (None: another holds it)."""
    locks = store.dir / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / (partition.replace("/", "__") + ".lock")
    for _ in range(2):
        try:
            path.mkdir()
        except FileExistsError:
            try:
                if time.time() - path.stat().st_mtime > STALE_S:
                    shutil.rmtree(path, ignore_errors=True)
                    continue
            except FileNotFoundError:
                continue
            return None
        (path / f"{socket.gethostname()}-{os.getpid()}").touch()
        return path
    return None


def _old(p: Path) -> bool:
    try:
        return time.time() - p.stat().st_mtime > STALE_S
    except FileNotFoundError:
        return False


def merge(store: Store, partition: str) -> bool:
    """Merges one night's files into one per dataset (see the module). True when it merged."""
    lock = _lock(store, partition)
    if lock is None:
        return False
    try:
        return _merge(store, partition)
    finally:
        shutil.rmtree(lock, ignore_errors=True)


def _merge(store: Store, partition: str) -> bool:
    con = connection()
    runs_dir = store.dataset("runs") / partition
    files = sorted(p for p in runs_dir.glob("*.parquet") if not p.name.startswith("."))
    garbage = [p for ds in DATASETS for p in (store.dataset(ds) / partition).glob(".*") if _old(p)]
    if not files:
        for p in garbage:
            p.unlink(missing_ok=True)
        return False
    rows = table(
        f"SELECT run_dir, version, ingested_ns, filename FROM read_parquet({parquet_list(files)}, filename=true)"
    ).to_pylist()
    best: dict[str, tuple] = {}
    for r in rows:
        name = Path(r["filename"]).name
        key = (r["version"], r["ingested_ns"], name.startswith("c-"), name)
        if r["run_dir"] not in best or key > best[r["run_dir"]][0]:
            best[r["run_dir"]] = (key, name, r["version"])
    keep = {rel: (name, version) for rel, (_k, name, version) in best.items() if (store.root / rel).is_dir()}
    names = {p.name for p in files}
    orphans = [
        p
        for ds in DATASETS
        if ds != "runs"
        for p in (store.dataset(ds) / partition).glob("*.parquet")
        if p.name not in names and _old(p)
    ]
    if len(files) <= 1 and len(keep) == len(best) and not orphans:
        for p in garbage:
            p.unlink(missing_ok=True)
        return False
    merged = f"c-{time.time_ns()}-{os.getpid()}.parquet"
    chosen = [(rel, name, version) for rel, (name, version) in keep.items()]
    if chosen:
        import pyarrow as pa

        con.register(
            "_keep",
            pa.table(
                {
                    "run_dir": [c[0] for c in chosen],
                    "part": [c[1] for c in chosen],
                    "version": pa.array([c[2] for c in chosen], pa.int64()),
                }
            ),
        )
        order = {
            "runs": "run_dir",
            "files": "run_dir, file",
            "tidy": "run_dir, file, row_in_file",
            "samples": "run_dir, file, case_index",
        }
        for ds in ("tidy", "samples", "files", "runs"):  # `runs` last: a reader finds a run through it
            sources = [store.dataset(ds) / partition / n for n in sorted(names)]
            sources = [p for p in sources if p.exists()]
            if not sources:
                continue
            target = store.dataset(ds) / partition / merged
            tmp = target.with_name(f".{merged}.{os.getpid()}.tmp")
            con.sql(
                f"COPY (SELECT * EXCLUDE (filename) FROM read_parquet({parquet_list(sources)}, filename=true, "
                f"union_by_name=true) WHERE (run_dir, version, parse_filename(filename)) IN "
                f"(SELECT run_dir, version, part FROM _keep) ORDER BY {order[ds]}) "
                f"TO {quote(str(tmp))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 131072)"
            )
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(tmp, target)
    with interrupts.deferred():  # the merged files are whole: the ones they replace go, `runs` first
        for ds in ("runs", "files", "samples", "tidy"):
            for n in names:
                (store.dataset(ds) / partition / n).unlink(missing_ok=True)
        for p in orphans + garbage:
            p.unlink(missing_ok=True)
    return True


def partitions(store: Store) -> list[str]:
    """The nights the store holds (card=<card>/night=<night>)."""
    root = store.dataset("runs")
    return sorted(f"{c.name}/{n.name}" for c in root.glob("card=*") for n in c.glob("night=*") if n.is_dir())


def run_folders(root: Path) -> list[Path]:
    """Every folder under `root` holding result files (what a scan reads), hidden folders left out."""
    out = []
    for here, dirs, _files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        folder = Path(here)
        if direct_files(folder) != ([], []):
            out.append(folder)
    return out


def _add_one(root: str, folder: str, store_dir: str) -> tuple[str, str]:
    """One run folder added (a worker's task): (status, or "" and why it was not)."""
    from triaudit.results.gbench import LoadError

    store = Store(Path(root))
    store.dir = Path(store_dir)
    try:
        return add_run(store, Path(folder), set()), ""
    except (LoadError, OSError) as exc:
        return "", f"{folder}: not added: {exc}"


# Past this many run folders to add, a pool of processes reads them (a rebuild of many nights).
PARALLEL_RUNS = 16


def _add_all(store: Store, folders: list[Path], say) -> tuple[int, int, list[str]]:
    """Adds run folders, by a pool of processes when there are many; (added, unchanged, problems)."""
    from triaudit.store.layout import part_name

    known = {part_name(rel, r.version) for rel, r in read_catalog(store).items()} if store.exists() else set()
    todo = []
    unchanged = 0
    for folder in folders:
        try:
            name = part_name(store.rel(folder), os.stat(folder).st_mtime_ns)
        except OSError:
            name = ""
        if name in known:
            unchanged += 1
        else:
            todo.append(folder)
    tasks = [(str(store.root), str(f), str(store.dir)) for f in todo]
    workers = min(os.cpu_count() or 1, 8)
    if len(tasks) >= PARALLEL_RUNS and workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import forkserver

        from triaudit.core.io.interrupts import ignore_in_worker

        # Workers fork from a clean server (not from this process and its engine's threads), ignore
        # Ctrl-C from their start: only this process handles it (core/io/interrupts.py).
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["triaudit.core.io.worker_start", "triaudit.store.ingest"])
        with interrupts.blocked():
            forkserver.ensure_running()
            pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=ignore_in_worker)
        try:
            results = list(pool.map(_add_one, *zip(*tasks), chunksize=4))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        results = [_add_one(*t) for t in tasks]
    added = sum(status == "added" for status, _ in results)
    unchanged += sum(status == "unchanged" for status, _ in results)
    problems = [why for _, why in results if why]
    if say and len(tasks) >= 100:
        say(f"  {len(tasks)} run folder(s) read")
    return added, unchanged, problems


def update(path: Path, say=None) -> dict:
    """Adds what the store lacks under `path` (making the store in `path` when none indexes it) and
    merges the nights touched; what it did, in counts and problems."""
    from triaudit.store.source import _Collect

    store = find_store(path) or Store(path)
    ensure_store(store)
    catalog = read_catalog(store)
    collected = _Collect(store, catalog, False)
    collected.path(Path(path))
    folders = sorted({Path(d) for d in collected.json}, key=lambda p: str(p))
    added, unchanged, problems = _add_all(store, folders, say)
    gone = {r.partition for rel, r in catalog.items() if not (store.root / rel).is_dir()}
    touched = {r.partition for r in read_catalog(store).values()} if added else set()
    merged = sum(merge(store, p) for p in sorted(touched | gone | _crowded(store)))
    return {"store": store.dir, "added": added, "unchanged": unchanged, "merged": merged, "problems": problems}


def _crowded(store: Store) -> set[str]:
    """Nights held in more than one file per dataset."""
    counts: dict[str, int] = {}
    for p in part_files(store, "runs"):
        key = f"{p.parent.parent.name}/{p.parent.name}"
        counts[key] = counts.get(key, 0) + 1
    return {k for k, n in counts.items() if n > 1}


def rebuild(root: Path, say=None) -> dict:
    """A new store for the results folder `root`, made aside from its JSON folders and swapped in."""
    root = Path(os.path.abspath(root))
    for left in [*root.glob(f"{STORE_DIR}.new-*"), *root.glob(f"{STORE_DIR}.old-*")]:
        if _old(left):  # a rebuild killed before it could clean up
            shutil.rmtree(left, ignore_errors=True)
    aside = root / f"{STORE_DIR}.new-{os.getpid()}"
    shutil.rmtree(aside, ignore_errors=True)
    new = Store(root)
    new.dir = aside
    try:
        ensure_store(new)
        added, _unchanged, problems = _add_all(new, run_folders(root), say)
        for p in partitions(new):
            merge(new, p)
        shutil.rmtree(aside / "locks", ignore_errors=True)
        old = root / f"{STORE_DIR}.old-{os.getpid()}"
        with interrupts.deferred():
            if (root / STORE_DIR).exists():
                os.rename(root / STORE_DIR, old)
            os.rename(aside, root / STORE_DIR)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(aside, ignore_errors=True)
        raise
    return {"store": root / STORE_DIR, "added": added, "problems": problems}
