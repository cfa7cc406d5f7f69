"""Any number of result files -> one tidy table.

One row per (result file, case, metric): the card, the run (its folder), the corner/op/variant and
the name's arguments as columns (m, n, k, bytes, ...), then the median, min, max, spread and number
of repetitions (reps). Skipped and errored cases get one row with their status and message and no
number. A case that two files of one run (and one GPU) both report is a conflict: one error row
naming both files, never two numbers in one column.

Built column-wise (a case's name is parsed once, rows are a take of per-case rows), and the
contexts sit in `df.attrs` inside an object pandas does not deep-copy on every operation: a report
over 100 cards x the whole catalogue stays in seconds.
"""

from __future__ import annotations

import errno
import math
import os
from array import array
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from .gbench import LoadError, ResultFile, load_result
from .runs import gpu_identity, read_run

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


class Shared(dict):
    """A dict that pandas' attrs propagation shares instead of deep-copying (pandas deep-copies
    `attrs` on nearly every operation; with thousands of contexts that was most of a report's time).
    Treat it as read-only."""

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self


class SharedNotes(tuple):
    """Like Shared, for the notes: a tuple pandas shares instead of deep-copying."""

    def __deepcopy__(self, memo):
        return self


def card_of(context: dict) -> str:
    if str(context.get("gpu_available", "")).lower() == "false":
        return "no GPU"
    return str(context.get("gpu_name") or "unknown card")


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


def name_parts(case: str) -> tuple[str, str, str, dict[str, str]]:
    corner, op, variant, args = _parts(case)
    return corner, op, variant, dict(args)


def _why_unreadable(p: Path) -> str:
    try:
        os.stat(p)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symbolic link loop"
        if e.errno == errno.ENOENT and p.is_symlink():
            return f"a dangling symbolic link (to {os.readlink(p)})"
        return e.strerror or str(e)
    return "not a regular file"


def scan_paths(paths: Iterable[str | Path]) -> tuple[list[Path], list[str]]:
    """(result files, notes on what was skipped). Files as given; folders searched recursively for
    *.json (manifests and hidden folders excluded). Inside a folder, a dangling or looping symbolic
    link is skipped and noted; a path given by name that cannot be read is refused (LoadError)."""
    out: list[Path] = []
    skipped: list[str] = []
    seen: set[Path] = set()

    def add(f: Path) -> None:
        key = f.resolve()
        if key not in seen:  # the same file named twice (a folder and a file in it) is read once
            seen.add(key)
            out.append(f)

    for p in map(Path, paths):
        if p.is_dir():
            try:
                found = sorted(p.rglob("*.json"))
            except OSError as e:
                raise LoadError(f"{p}: cannot be searched: {e.strerror or e}") from e
            for f in found:
                rel = f.relative_to(p)
                if f.name == "manifest.json" or any(part.startswith(".") for part in rel.parts):
                    continue
                if f.is_file():
                    add(f)
                elif f.is_symlink():
                    skipped.append(f"{f}: {_why_unreadable(f)}, skipped")
        elif p.is_file():
            add(p)
        elif p.is_symlink():
            raise LoadError(f"{p}: {_why_unreadable(p)}")
        else:
            raise LoadError(f"{p}: no such file or directory")
    return out, skipped


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; directories searched recursively for *.json (manifests excluded)."""
    return scan_paths(paths)[0]


def _stats(values: list[float]) -> tuple[float, float, float, float, int]:
    values = sorted(values)
    n = len(values)
    med = values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
    lo, hi = values[0], values[-1]
    return med, lo, hi, ((hi - lo) / abs(med) * 100 if med else math.nan), n


_METRIC_COLS = ("metric", "median", "min", "max", "spread_pct", "reps", "status", "message")
# The columns that differ between the rows of one case in one file (one row per counter); every
# other column (card, run, the name's parts) is the case's and the file's (tidy_csv relies on it).
ROW_COLUMNS = _METRIC_COLS


def _columns(rf: ResultFile) -> tuple[list[str], dict]:
    """A file's cases and, column-wise, one entry per (case, metric): the case's index among the
    cases ("take"), metric, median, min, max, spread_pct, reps, status, message. Skipped and errored
    cases get one entry with their status and message and no number. Numbers in typed arrays (for a
    hundred cards, millions of float objects would stay with the allocator after the table is built)."""
    by_case: dict[str, list] = {}
    for r in rf.runs:
        by_case.setdefault(r.case, []).append(r)
    cols: dict = {
        "take": array("q"),
        "metric": [],
        "median": array("d"),
        "min": array("d"),
        "max": array("d"),
        "spread_pct": array("d"),
        "reps": array("q"),
        "status": [],
        "message": [],
    }
    take, metric, med, lo, hi, spread, reps, status, message = (cols[c] for c in ("take", *_METRIC_COLS))
    nan = math.nan

    def add(i, m, v, vmin, vmax, sp, n, st, msg):
        take.append(i), metric.append(m), med.append(v), lo.append(vmin), hi.append(vmax), spread.append(sp)
        reps.append(n), status.append(st), message.append(msg)

    for i, runs in enumerate(by_case.values()):
        bad = [r for r in runs if r.status != "ok"]
        if bad:
            worst = next((r for r in bad if r.status == "error"), bad[0])
            add(i, "", nan, nan, nan, nan, 0, worst.status, worst.message)
            continue
        iterations = [r for r in runs if r.run_type == "iteration"]
        if iterations:
            times = [r.time_s for r in iterations if r.time_s == r.time_s]  # NaN: no time printed (peer imports)
            samples: dict[str, list[float]] = {"time_s": times} if times else {}
            for r in iterations:
                for k, v in r.counters.items():
                    samples.setdefault(k, []).append(v)
            for m, values in samples.items():
                add(i, m, *_stats(values), "ok", "")
        else:  # aggregates only (--benchmark_report_aggregates_only)
            median = next((r for r in runs if r.aggregate_name == "median"), None)
            if median is None:
                kinds = sorted({r.aggregate_name or "unnamed" for r in runs})
                add(
                    i,
                    "",
                    nan,
                    nan,
                    nan,
                    nan,
                    0,
                    "skipped",
                    f"{rf.path.name}: only aggregates ({', '.join(kinds)}) and no median: nothing to show",
                )
                continue
            for m, v in {"time_s": median.time_s, **median.counters}.items():
                add(i, m, v, nan, nan, nan, 0, "ok", "aggregates only")
    return list(by_case), cols


def _load_one(path: Path) -> tuple[Path, dict, list[str], list[str], dict]:
    """One file -> (path, context, notes, cases, columns): what the table keeps of it."""
    rf = load_result(path)
    return (rf.path, rf.context, rf.notes, *_columns(rf))


# Parsing is CPU-bound Python: past this many files (a fleet, a hundred cards) the files are read
# by one process per core (forked; the columns come back compact). Below it, the start-up is not worth it.
PARALLEL_FILES = 24


def _load_all(files: list[Path]):
    """_load_one per file, in order, as they are read (never all held at once)."""
    workers = min(os.cpu_count() or 1, 8)
    import multiprocessing

    if len(files) < PARALLEL_FILES or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(_load_one, files)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        # Small chunks: the first files come back at once, and no core idles at the end.
        yield from pool.map(_load_one, files, chunksize=max(1, min(4, len(files) // (4 * workers))))


def load_table(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Loads every result file under `paths` into one tidy DataFrame.

    df.attrs["contexts"] maps each file to its JSON context (L2 size, peak bandwidth, ...),
    df.attrs["runs"] each run folder to its RunInfo, df.attrs["notes"] says what was skipped.
    """
    files, notes = scan_paths(paths)
    contexts = Shared()
    runs = Shared()
    # Read file by file, keeping only the compact columns (the parsed runs of 100 cards would
    # not fit the memory budget). A case two files of one run and GPU both report is found as the
    # second one arrives and fixed up at the end.
    owner: dict[tuple, str] = {}
    conflicts: dict[tuple[str, str], str] = {}
    file_cols: dict[str, list] = {c: [] for c in ("card", "run", "file", "run_dir", "complete", "case")}
    metric_cols: dict = {c: (array("d") if c in _NUMERIC else array("q") if c == "reps" else []) for c in _METRIC_COLS}
    takes: list = []
    for path, context, file_notes, case_names, cols in _load_all(files):
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
        n, offset = len(case_names), len(file_cols["case"])
        for col, v in (
            ("card", card),
            ("run", run.name),
            ("file", f),
            ("run_dir", run.run_dir),
            ("complete", run.complete),
        ):
            file_cols[col].extend([v] * n)
        file_cols["case"].extend(case_names)
        takes.append(np.frombuffer(cols["take"], dtype=np.int64) + offset)
        for col in _METRIC_COLS:
            metric_cols[col].extend(cols[col])
    take = np.concatenate(takes) if takes else np.zeros(0, dtype=np.int64)
    cases = pd.DataFrame(file_cols)
    if not cases.empty:
        parts = [_parts(c) for c in cases["case"]]
        cases["corner"] = [p[0] for p in parts]
        cases["op"] = [p[1] for p in parts]
        cases["variant"] = [p[2] for p in parts]
        argdicts = [dict(p[3]) for p in parts]
        keys: dict[str, None] = {}
        for a in argdicts:
            for k in a:
                keys.setdefault(k)
        for k in keys:
            if k not in cases.columns:
                cases[k] = [a.get(k) for a in argdicts]
    df = cases.iloc[take].reset_index(drop=True) if len(take) else cases.iloc[0:0]
    for col in list(metric_cols):
        values = metric_cols.pop(col)  # each list freed as soon as its column exists
        if isinstance(values, array):
            values = np.frombuffer(values, dtype=np.float64 if values.typecode == "d" else np.int64).copy()
        df[col] = (
            pd.Series(values, dtype="float64" if col in _NUMERIC else None, index=df.index)
            if len(take)
            else pd.Series(dtype="float64" if col in _NUMERIC else "object")
        )
        del values
    for c in BASE_COLUMNS + ["run_dir", "complete"]:
        if c not in df.columns:
            df[c] = pd.Series(dtype="float64" if c in _NUMERIC else "object")
    if conflicts:
        pair = pd.Series(list(zip(df["file"], df["case"])), index=df.index)
        hit = pair.isin(conflicts)
        first = hit & ~pair.duplicated()
        df = df[~hit | first].copy()
        fixed = pair[df.index]
        for col, v in (
            ("metric", ""),
            ("median", math.nan),
            ("min", math.nan),
            ("max", math.nan),
            ("spread_pct", math.nan),
            ("reps", 0),
            ("status", "error"),
        ):
            df.loc[first[df.index], col] = v
        df.loc[first[df.index], "message"] = [conflicts[k] for k in fixed[first[df.index]]]
        df = df.reset_index(drop=True)
    front = BASE_COLUMNS + ["complete", "run_dir"]
    df = df[front + [c for c in df.columns if c not in front]]
    df.attrs["contexts"] = contexts
    df.attrs["runs"] = runs
    df.attrs["notes"] = SharedNotes(notes)
    return df


def card_contexts(df: pd.DataFrame) -> dict[str, dict]:
    """One context per card column (the last file's), for L2 size and peak bandwidth."""
    contexts = df.attrs.get("contexts", {})
    out: dict[str, dict] = {}
    if df.empty or "file" not in df:
        for ctx in contexts.values():
            out[card_of(ctx)] = ctx
        return out
    # The first row of each file (factorize: a hundred cards' million rows, several times a report).
    codes, files = pd.factorize(df["file"], sort=False)
    seen, first = np.unique(codes, return_index=True)
    cards = df["card"].to_numpy()
    for code, pos in zip(seen, first):
        if code >= 0 and files[code] in contexts:
            out[cards[pos]] = contexts[files[code]]
    return out
