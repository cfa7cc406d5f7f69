"""Adding a run to the results store: its folder read once, by the same code every command reads JSON
with (results/table.py load_results, results/samples.py, results/facts.py), and written as one file
per dataset (layout.py), each aside and renamed into place, the `runs` row last: a reader sees the
whole run or none of it, and a killed write leaves the store as it was (its hidden temporary files
are removed by the next compaction). A run already there at the same version is left alone, so
adding a run twice changes nothing; a run whose folder changed since (its modification time) is
written again under its new version, and readers take the newest.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from triaudit import __version__
from triaudit.core.files import atomic_write, written_aside
from triaudit.results.reading import Reading, _why_unreadable
from triaudit.results.runs import RunInfo, read_run
from triaudit.results.samples import file_samples
from triaudit.results.table import load_results
from triaudit.store.layout import FORMAT, META, RUN_MARK, Store, night_of, part_name, partition
from triaudit.store.rows import Capture, dumps, marked, run_row


def direct_files(folder: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """The result files right in `folder`, as results/reading.py scan_paths finds them (manifests
    and hidden files left out), and the links among them that lead nowhere: (name, why)."""
    files, skipped, seen = [], [], set()
    for f in sorted(folder.glob("*.json")):
        if f.name == "manifest.json" or f.name.startswith("."):
            continue
        if f.is_file():
            real = f.resolve()
            if real not in seen:  # a link to a file beside it: read once, as scan_paths reads it
                seen.add(real)
                files.append(f)
        elif f.is_symlink():
            skipped.append((f.name, _why_unreadable(f)))
    return files, skipped


def run_tables(
    store: Store,
    run_dir: Path,
    mtime_ns: int,
    found: tuple[list[Path], list[tuple[str, str]]] | None = None,
    with_samples: bool = True,
) -> dict | None:
    """One run folder as a table per dataset; None when it holds no result file (not a run).
    `found`: its files and skipped links, when the caller has them (some of its files: a reader
    given one file of a run); `with_samples`: also each case's repetitions (a second read)."""
    files, skipped = found if found is not None else direct_files(run_dir)
    if not files and not skipped:
        return None
    here = str(run_dir)
    rel = store.rel(run_dir)
    stamp = time.time_ns()
    capture = Capture(Reading(files, []))
    rs = load_results([], capture) if files else None  # type: ignore[arg-type]  # a Reading, as load_results reads it
    run: RunInfo = rs.runs[here] if rs is not None and here in rs.runs else read_run(run_dir, [])
    contexts = rs.contexts if rs is not None else {}
    per_file = capture.per_file
    row, facts = run_row(run, contexts, per_file, skipped, here)
    samples = [file_samples(Path(f), run) for f in contexts] if with_samples else []
    common = {"run_dir": rel, "version": mtime_ns, "ingested_ns": stamp}
    runs = {**common, "format": FORMAT, "triaudit_version": __version__, **row}
    files_cols: dict[str, list] = {k: [] for k in ("file", "name", "context", "notes", "sample_notes")}
    fact_cols: dict[str, list] = {}
    for i, (f, ctx) in enumerate(contexts.items()):
        files_cols["file"].append(store.rel(Path(f)))
        files_cols["name"].append(Path(f).name)
        files_cols["context"].append(dumps(ctx))
        files_cols["notes"].append(dumps([marked(n, here) for n in per_file[f][0]]))
        files_cols["sample_notes"].append(dumps([marked(n, here) for n in samples[i].notes] if samples else []))
        for k, v in facts[f].items():
            fact_cols.setdefault(k, []).append(marked(v, here) if isinstance(v, str) else v)
    n_files = len(files_cols["file"])
    files_table = {**{k: [v] * n_files for k, v in common.items()}, **files_cols, **fact_cols}

    tidy = _tidy(store, rs, per_file, facts, common, here) if rs is not None else None
    samp = _samples(store, samples, common, here)
    return {
        "runs": _typed(pa.table({k: [v] for k, v in runs.items()})),
        "files": _typed(pa.table(files_table)) if n_files else None,
        "tidy": _typed(tidy),
        "samples": _typed(samp),
        "_partition": partition(row["card_name"], night_of(run.started)),
        "_name": part_name(rel, mtime_ns),
    }


def _tidy(store: Store, rs, per_file: dict, facts: dict, common: dict, here: str) -> pa.Table | None:
    t = rs.table
    if t.empty:
        return None
    files = t["file"].astype(str).to_numpy()
    row = t.groupby("file", observed=True, sort=False).cumcount().to_numpy(dtype=np.int32)
    described = {}
    for f, (_notes, cases, infos) in per_file.items():
        for c, info in zip(cases, infos):
            if info is not None:
                described[(f, c)] = dumps(info)
    cases = t["case"].astype(str).to_numpy()
    fact = {f: facts[f] for f in facts}
    rel = {f: store.rel(Path(f)) for f in fact}
    out = {
        **{k: np.full(len(t), v) for k, v in common.items()},
        "file": [rel[f] for f in files],
        "row_in_file": row,
        "case_name": cases,
        "metric": t["metric"].astype(str).to_numpy(),
        "median": t["median"].to_numpy(dtype=np.float64),
        "min": t["min"].to_numpy(dtype=np.float64),
        "max": t["max"].to_numpy(dtype=np.float64),
        "spread_pct": t["spread_pct"].to_numpy(dtype=np.float64),
        "reps": t["reps"].to_numpy(dtype=np.int64),
        "status": t["status"].astype(str).to_numpy(),
        "message": [marked(m, here) for m in t["message"].astype(str)],
        "description": [described.get((f, c)) for f, c in zip(files, cases)],
        # For SQL readers (Spark, Trino, DuckDB): who and what each row is, without a join.
        "card_name": t["card"].astype(str).to_numpy(),
        "run": t["run"].astype(str).to_numpy(),
        "provenance": t["provenance"].astype(str).to_numpy(),
    }
    rel_run = common["run_dir"]
    for k in ("gate_host", "per_gpu", "model", "driver", "gpu_index", "gpu_uuid", "siblings_loaded"):
        out["host" if k == "gate_host" else k] = [fact[f][k] for f in files]
    key = {f: marked(x["gpu"], here).replace(RUN_MARK, rel_run) if x["per_gpu"] else "" for f, x in fact.items()}
    out["gpu"] = [key[f] for f in files]
    frame = pd.DataFrame(out)
    for c in (
        "file",
        "case_name",
        "metric",
        "status",
        "message",
        "description",
        "card_name",
        "run",
        "provenance",
        "host",
    ):
        frame[c] = frame[c].astype("category")
    return pa.Table.from_pandas(frame, preserve_index=False)


def _samples(store: Store, samples: list, common: dict, here: str) -> pa.Table | None:
    cols: dict[str, list] = {
        k: []
        for k in (
            "file",
            "case_index",
            "case_name",
            "status",
            "message",
            "metric",
            "higher",
            "repetitions",
            "aggregates_only",
        )
    }
    cols.update(algo=[], label=[])
    for fs in samples:
        rel = store.rel(fs.path)
        for i, (case, s) in enumerate(fs.cases):
            cols["file"].append(rel)
            cols["case_index"].append(i)
            cols["case_name"].append(case)
            cols["status"].append(s.status)
            cols["message"].append(marked(s.message, here))
            cols["metric"].append(s.metric)
            cols["higher"].append(bool(s.higher))
            cols["repetitions"].append([float(v) for v in s.values])
            cols["aggregates_only"].append(bool(s.aggregates_only))
            cols["algo"].append([float(v) for v in s.algo])
            cols["label"].append(str(s.label))
    n = len(cols["file"])
    if not n:
        return None
    schema = {"repetitions": pa.list_(pa.float64()), "algo": pa.list_(pa.float64())}
    arrays = {k: pa.array(v, type=schema.get(k)) for k, v in cols.items()}
    return pa.table({**{k: pa.array([v] * n) for k, v in common.items()}, **arrays})


def _typed(table: pa.Table | None) -> pa.Table | None:
    """A column with no value at all (no case described, no note) is text, not Arrow's null type:
    every engine (Spark among them) reads every file of a dataset with one schema."""
    if table is None:
        return None
    fields = [pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f for f in table.schema]
    return table.cast(pa.schema(fields)) if fields != list(table.schema) else table


def write_table(table: pa.Table, target: Path) -> None:
    """One Parquet file, written aside (a hidden name beside it), synced, renamed into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with written_aside(target) as f:
        pq.write_table(table, f, compression="zstd", row_group_size=131072)


def ensure_store(store: Store) -> None:
    """The store's folder and its store.json (format, the triaudit that made it), made once."""
    meta = store.dir / META
    if meta.is_file():
        return
    store.dir.mkdir(parents=True, exist_ok=True)
    atomic_write(meta, dumps({"format": FORMAT, "made_by": f"triaudit {__version__}"}) + "\n")


def _names(store: Store) -> set[str]:
    """The file names of the store's runs not yet merged (a merged run's version is in the catalog)."""
    root = store.dataset("runs")
    if not root.is_dir():
        return set()
    return {p.name for p in root.glob("card=*/night=*/r-*.parquet")}


def add_run(store: Store, run_dir: Path, known: set[str] | None = None) -> str:
    """Adds one run folder: "added", "unchanged" (this version is there), or "empty" (no result file).
    `known`: the names of the versions the store holds (layout.part_name of each catalog run), when
    the caller has them; else its unmerged files are looked at."""
    run_dir = Path(run_dir)
    mtime = os.stat(run_dir).st_mtime_ns  # before reading: a folder changed meanwhile is read again later
    rel = store.rel(run_dir)
    name = part_name(rel, mtime)
    if name in (known if known is not None else _names(store)):
        return "unchanged"
    tables = run_tables(store, run_dir, mtime)
    if tables is None:
        return "empty"
    part = tables.pop("_partition")
    tables.pop("_name")
    if (store.dataset("runs") / part / name).exists():
        return "unchanged"
    ensure_store(store)
    # The run's rows first, its `runs` row last: readers find a run through `runs` alone.
    for ds in ("tidy", "samples", "files", "runs"):
        if tables[ds] is not None:
            write_table(tables[ds], store.dataset(ds) / part / name)
    return "added"
