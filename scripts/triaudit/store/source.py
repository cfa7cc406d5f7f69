"""Where a command's results come from: the store that indexes its paths (store/), or their JSON
files, as before there was a store.

open_source(paths) finds the store in or above the paths and checks it against the folders, which
stay the record: a run the store holds is taken from it when its folder is unchanged (its
modification time is the one it was added at: files added, removed or renamed in it change it); a
run folder it does not hold, or holds in an older version, is read from its JSON files on the fly,
into the same tables; a run whose folder is gone is left out. Finding those costs a listing of the
folders that hold runs (results/, results/<card>/ ...) and a look at each run folder's time, never
a read of a result file. A command then chooses runs from their `runs` rows (the gate: each host's
newest) and loads only those, only the counters it reads.

Without a store, or when it cannot be read (another format; DuckDB or pyarrow missing: said once on
stderr), the JSON files are read as before (JsonSource), through the same interface. A result file
edited in place (not replaced) does not change its folder's time: after such an edit, `triaudit
store rebuild`. A store run is taken whole: a path naming some of a run's files reads them as JSON.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triaudit.core.files import not_a_regular_file
from triaudit.core.io.tell import notice
from triaudit.results.facts import IDENTITY_KEYS
from triaudit.results.gbench import LoadError
from triaudit.results.reading import Reading, _why_unreadable, scan_paths
from triaudit.results.runs import RunInfo
from triaudit.store.layout import RUN_MARK, STORE_DIR, Store, ancestors, find_store, under
from triaudit.store.rows import Capture, run_row

_SAID: set[str] = set()
TRUNCATED_WORDS = "ends before its last entry closes"  # results/gbench.py read_json's warning


def _tell_once(text: str) -> None:
    if text not in _SAID:
        _SAID.add(text)
        notice(text)


def parts_key(path) -> tuple[str, ...]:
    """How pathlib orders paths (part by part), for sorting many paths quickly."""
    return tuple(p for p in str(path).split("/") if p and p != ".")


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) - 1)]


def join(folder: str, name: str) -> str:
    """str(Path(folder) / name), without making a Path."""
    if folder in ("", "."):
        return name
    return folder + name if folder.endswith("/") else f"{folder}/{name}"


@dataclass
class Run:
    """A run folder in a command's scope: from the store, or read from its JSON files just now."""

    run_dir: str  # as the command's paths spell it (str(path.parent) of its files)
    rel_dir: str  # as the store names it
    row: dict  # its `runs` row (store/rows.py run_row)
    stored: Any = None  # catalog.StoredRun when it is in the store (None: read from JSON)
    tables: dict | None = None  # read from JSON for a store: its tables, as adding it would write them
    taken: list[str] | None = None  # its result files in scope (names), when not all of them are

    @property
    def names(self) -> list[str]:
        """Its result files in scope (names, in scan order); a stored run's once Source.complete read them."""
        if self.taken is None:
            self.taken = json.loads(self.row["file_names"])
        return self.taken

    @property
    def files(self) -> list[str]:
        return [join(self.run_dir, n) for n in self.names]

    @property
    def has_files(self) -> bool:
        return bool(self.taken) if self.taken is not None else self.row["n_files"] > 0

    def rel(self, name: str) -> str:
        return join(self.rel_dir, name)

    @property
    def info(self) -> RunInfo:
        """Its RunInfo (the manifest's GPU lists only once the run is loaded: Source.load)."""
        got = self.__dict__.get("_info")
        if got is None or ("gpu_files" in self.row and not got.gpu_files and self.row["gpu_files"] != "[]"):
            r = self.row
            got = RunInfo(
                self.run_dir,
                r["name"],
                r["started"],
                r["host"],
                r["git_commit"],
                bool(r["complete"]),
                self.text(r["manifest_note"]),
                tuple(tuple(g) for g in json.loads(r.get("gpu_files") or "[]")),
                tuple(json.loads(r.get("node_level_files") or "[]")),
            )
            self.__dict__["_info"] = got
        return got

    def text(self, s: str) -> str:
        return s.replace(RUN_MARK, self.run_dir) if RUN_MARK in s else s

    def file_notes(self) -> dict[str, list[str]]:
        """Each file's notes (by name), as load_results gives them."""
        text = self.row["file_notes"]
        if text == "[]":
            return {}
        return {name: [self.text(n) for n in notes] for name, notes in json.loads(text)}


def _check_path(p: Path) -> None:
    """What scan_paths refuses of a path given by name, refused the same way."""
    if p.is_dir() or p.is_file():
        return
    if p.is_symlink():
        raise LoadError(f"{p}: {_why_unreadable(p)}")
    if not_a_regular_file(p):
        raise LoadError(f"{p}: {not_a_regular_file(p)}, not a result file")
    raise LoadError(f"{p}: no such file or directory")


def _scan(folder: Path, base: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """scan_paths of a folder under a path given (hidden parts counted from `base`): its files and
    its links that lead nowhere, as (path, why), unsaid. What sorted(folder.rglob("*.json")) finds
    (symbolic links to folders named, never entered), by os.walk: a folder of a year's status
    files is listed without a Path for each."""
    hidden = any(part.startswith(".") for part in folder.relative_to(base).parts)
    if hidden:
        return [], []
    found: list[str] = []
    for here, dirs, names in os.walk(folder):
        found += [join(here, n) for n in names if n.endswith(".json")]
        found += [join(here, d) for d in dirs if d.endswith(".json")]  # rglob names folders too
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # under a hidden part: never a result
    return _result_files(Path(text) for text in sorted(found, key=parts_key))


def _direct(folder: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The result files right in a folder (as _scan finds them there)."""
    return _result_files(sorted(folder.glob("*.json")))


def _result_files(candidates: Iterable[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Of `.json` paths in order: the result files (never a manifest or a hidden file), and the
    links that lead nowhere, as (path, why)."""
    files, skipped = [], []
    for f in candidates:
        if f.name == "manifest.json" or f.name.startswith("."):
            continue
        if f.is_file():
            files.append(f)
        elif f.is_symlink():
            skipped.append((f, _why_unreadable(f)))
    return files, skipped


def _complete_rows(store: Store, stored: list) -> None:
    """catalog.HEAVY columns of these catalog runs (StoredRun), read into their rows in one query."""
    from triaudit.store.catalog import HEAVY
    from triaudit.store.load import query

    lacking = [r for r in stored if HEAVY[0] not in r.row]
    if not lacking:
        return

    class _Ref:  # what load.query needs of a run
        def __init__(self, r):
            self.stored, self.tables = r, None

    got = query(store, [_Ref(r) for r in lacking], "runs", "run_dir, " + ", ".join(HEAVY))
    rows = {d: vals for d, *vals in zip(*(got.column(c).to_pylist() for c in ("run_dir", *HEAVY)))}
    for r in lacking:
        r.row.update(zip(HEAVY, rows[r.rel]))


class _Collect:
    """The runs under the paths given, as a scan of them would find their files: from the store
    where it holds a folder unchanged, else the JSON files, by folder; each file once."""

    def __init__(self, store: Store, catalog: dict, several: bool, every: set[str] | None = None):
        """`every`: every run folder the store holds in scope when `catalog` holds only some of
        them (catalog.read_newest): a folder among them is not new; a folder of them changed, gone,
        or any folder the store lacks makes the collection `stale` (read the whole catalog)."""
        self.store, self.catalog, self.several, self.every = store, catalog, several, every
        self.stale = False
        self.stored: list[tuple[str, Any, list[str] | None]] = []  # (folder as spelled, StoredRun, names taken)
        self.json: dict[str, list[Path]] = {}  # folder -> its files to read from JSON
        self.skipped: list[tuple[Path, str]] = []  # links that lead nowhere, in scan order
        self._seen_runs: dict[str, set[str]] = {}  # real folder -> names taken

    def _new(self, folder_real: str, name: str) -> bool:
        taken = self._seen_runs.setdefault(folder_real, set())
        if name in taken:
            return False
        taken.add(name)
        return True

    def complete(self, stored: list) -> None:
        _complete_rows(self.store, stored)

    def _real(self, folder: str) -> str:
        """The key a folder's files are taken once by: its real path when several paths were given."""
        return os.path.realpath(folder) if self.several else folder

    def add_json(self, files: list[Path]) -> None:
        for f in files:
            if self._new(self._real(str(f.parent)), f.name):
                self.json.setdefault(str(f.parent), []).append(f)

    def path(self, p: Path) -> None:
        _check_path(p)
        if p.is_file():
            self.add_json([p])
            return
        if not (os.path.abspath(p) + "/").startswith(str(self.store.root).rstrip("/") + "/"):
            files, skipped = _scan(p, p)
            self.skipped += skipped
            self.add_json(files)
            return
        self._folder(p)

    def _folder(self, p: Path) -> None:
        store, scope = self.store, self.store.rel(p)
        known = {rel: r for rel, r in self.catalog.items() if under(rel, scope)}
        every = known if self.every is None else self.every  # the store's folders (read_newest: all of them)

        given = str(p)

        def spelled(rel: str) -> str:
            """A store path as the path given spells it (str of what p.rglob finds)."""
            return given if rel == scope else join(given, rel if scope == "." else rel[len(scope) + 1 :])

        listed: set[str] = {scope}
        parents: set[str] = set()  # a fleet's runs share a few parents: their ancestors found once each
        for rel in every:
            parent = rel.rpartition("/")[0]
            if parent not in parents:
                parents.add(parent)
                listed.update(ancestors(rel, scope))
        fresh = []
        json_folders: list[str] = []
        root = str(store.root)
        for rel, r in known.items():
            try:
                mtime = os.stat(f"{root}/{rel}").st_mtime_ns
            except FileNotFoundError:
                self.stale = True
                continue  # the folder is gone: so is the run
            if mtime == r.version:
                fresh.append((rel, r))
            else:
                self.stale = True
                listed.add(rel)  # changed: read from JSON, and look for folders new inside it
                json_folders.append(rel)
        if self.every is not None and self.stale:
            return
        unknown: list[str] = []
        present: set[str] = set()  # what the folders hold (read_newest: are the runs not kept still there?)
        for folder in listed:
            try:
                names = os.listdir(root if folder == "." else f"{root}/{folder}")
            except (FileNotFoundError, NotADirectoryError):
                continue
            prefix = "" if folder == "." else folder + "/"
            # Names as text and sets: a card's folder holds a year of runs, nearly all of them known.
            children = {prefix + n for n in names if not n.startswith(".")}
            present |= children
            has_files = False
            for child in children.difference(every).difference(listed):
                try:
                    is_dir = stat.S_ISDIR(os.lstat(f"{root}/{child}").st_mode)
                except FileNotFoundError:
                    continue
                if is_dir:
                    unknown.append(child)
                elif child.endswith(".json") and not child.endswith("/manifest.json") and child != "manifest.json":
                    has_files = True
            if has_files and folder not in every:
                json_folders.append(folder)
        if self.every is not None and (json_folders or self.every.difference(present).difference((scope,))):
            self.stale = True
            return
        json_files: list[Path] = []
        links: list[tuple[Path, str]] = []
        for rel in json_folders:
            files, skipped = _direct(Path(spelled(rel)))
            json_files += files
            links += skipped
        for rel in unknown:
            files, skipped = _scan(Path(spelled(rel)), p)
            json_files += files
            links += skipped
        if self.every is not None and json_files:  # runs the store lacks: read_newest cannot choose
            self.stale = True
            return
        for rel, r in fresh:
            if r.row["scan_notes"] != "[]":
                run_folder = Path(spelled(rel))
                links += [(run_folder / n, why) for n, why in json.loads(r.row["scan_notes"])]
        links.sort(key=lambda x: parts_key(x[0]))
        self.skipped += links
        json_files.sort(key=parts_key)
        self.add_json(json_files)
        # Store paths (normalised, POSIX) part by part: "/" as the lowest character orders them so.
        fresh.sort(key=lambda x: x[0].replace("/", "\0"))
        if self.several:  # two paths may reach one file: each taken once, as scan_paths takes it
            self.complete([r for _rel, r in fresh])
        for rel, r in fresh:
            if r.row["n_files"] == 0:
                continue
            folder = spelled(rel)
            if not self.several:  # one path: no file can be reached twice
                self.stored.append((folder, r, None))
                continue
            real = self._real(folder)
            names = [n for n in json.loads(r.row["file_names"]) if self._new(real, n)]
            if names:
                self.stored.append((folder, r, names))


def _again(method):
    """A Source method that reads the store's files, tried again once after reading the catalog
    anew when a night was merged under it (its files replaced by the merged one: compact.py)."""
    import functools

    @functools.wraps(method)
    def wrapper(self, *args, **kw):
        from duckdb import IOException

        from triaudit.store.load import PartGone

        try:
            return method(self, *args, **kw)
        except (PartGone, IOException):
            self.refresh()
            return method(self, *args, **kw)

    return wrapper


class Source:
    """The runs under a command's paths, from the store and (what it lacks) their JSON files."""

    def __init__(self, store: Store, collected: _Collect, with_samples: bool = False):
        from triaudit.store.ingest import run_tables

        self.store = store
        self.skipped = []
        for f, why in collected.skipped:
            note = f"{f}: {why}, skipped"
            notice(f"warning: {note}")  # as scan_paths says it
            self.skipped.append(note)
        runs: list[Run] = []
        for folder, stored, names in collected.stored:
            runs.append(Run(folder, stored.rel, stored.row, stored=stored, taken=names))
        for folder, files in collected.json.items():
            # Its links that lead nowhere are said above, with the scan's.
            tables = run_tables(store, Path(folder), 0, (files, []), with_samples=with_samples)
            if tables is None:
                continue
            row = {k: v[0] for k, v in tables["runs"].to_pydict().items()}
            runs.append(Run(folder, store.rel(Path(folder)), row, tables=tables, taken=[f.name for f in files]))
        if collected.json:  # the store's are in order already: the JSON folders go among them
            runs.sort(key=lambda r: parts_key(r.run_dir))
        self.runs = runs
        # Each host's number of runs and its newest names, when `runs` holds only some of them
        # (open_source newest_per_host: gate_facts.newest_runs says so from these).
        self.hosts: dict[str, tuple[int, list[str]]] | None = None
        self._nested = self._find_nested()
        self._who: dict[str, dict] = {}
        if collected.json:
            n = len(collected.json)
            _tell_once(
                f"note: {n} run folder(s) under {store.root} are not in its results store yet and were read "
                f"from their JSON files: `triaudit store update {store.root}` adds them"
            )

    def _find_nested(self) -> bool:
        """Whether a run folder lies inside another (then files, not folders, give the scan order)."""
        dirs = {r.run_dir.rstrip("/") for r in self.runs}
        parents = {os.path.dirname(d) for d in dirs}  # a fleet's runs share a few parents
        return any(p in dirs or any(a in dirs for a in _ancestors(p + "/x")) for p in parents)

    def ordered(self, runs: list[Run] | None = None) -> list[tuple[Run, str]]:
        """(run, file name) of every file of `runs`, in the order a scan of the paths gives them."""
        runs = self.runs if runs is None else runs
        self.complete(runs)
        pairs = [(r, n) for r in runs for n in r.names]
        if self._nested:
            pairs.sort(key=lambda x: parts_key(join(x[0].run_dir, x[1])))
        return pairs

    def files(self) -> list[Path]:
        """Every result file, in the order a scan of the paths gives them."""
        return [Path(join(r.run_dir, n)) for r, n in self.ordered()]

    def notes(self, runs: list[Run] | None = None) -> list[str]:
        """What load_results says of the files (their notes, each run's manifest note), in scan order."""
        runs = self.runs if runs is None else runs
        said = [r for r in runs if r.row["file_notes"] != "[]" or r.row["manifest_note"]]
        self.complete(said)
        out: list[str] = []
        if not self._nested:  # a run's files are together in scan order: its notes too
            for r in said:
                notes = r.file_notes()
                names = r.names
                for i, n in enumerate(names):
                    out += notes.get(n, [])
                    if i == 0 and r.row["manifest_note"]:
                        out.append(r.text(r.row["manifest_note"]))
        else:
            first = set()
            by_run = {id(r): r.file_notes() for r in said}
            for r, n in self.ordered(said):
                out += by_run[id(r)].get(n, [])
                if id(r) not in first:
                    first.add(id(r))
                    if r.row["manifest_note"]:
                        out.append(r.text(r.row["manifest_note"]))
        for n in out:
            if n.startswith("warning: ") and TRUNCATED_WORDS in n:
                notice(n)  # read_json says so on the console when it reads such a file
        return out

    # -- loading ------------------------------------------------------------------------------

    @_again
    def contexts(self, runs: list[Run]) -> dict[str, dict]:
        """Each file's context, by the path the command's paths spell, in scan order."""
        from triaudit.store.load import Contexts, query

        columns = ["file", "context", "per_gpu", *IDENTITY_KEYS]
        got = query(self.store, runs, "files", ", ".join(f'"{c}"' for c in columns))
        table = (
            dict(zip(got.column("file").to_pylist(), zip(*(got.column(c).to_pylist() for c in columns[1:]))))
            if got is not None
            else {}
        )
        del got
        out = {}
        who = {}
        shared = Contexts()
        for r, n in self.ordered(runs):
            values = table.get(r.rel(n))
            if values is None:
                continue
            f = join(r.run_dir, n)
            out[f] = shared.loads(values[0])
            if values[1]:
                who[f] = {k: r.text(v) for k, v in zip(IDENTITY_KEYS, values[2:])}
        self._who.update(who)
        return out

    def refresh(self) -> None:
        """Each stored run's files, as the catalog says them now (same version: a merged night)."""
        import dataclasses

        from triaudit.store.catalog import read_catalog

        now = read_catalog(self.store)
        for r in self.runs:
            new = now.get(r.stored.rel) if r.stored is not None else None
            if new is not None and new.version == r.stored.version:
                r.stored = dataclasses.replace(new, row=r.stored.row)

    def retrying(self, fn, *args, **kw):
        """fn(*args) that reads the store, tried again once if a night was merged under it."""
        return _again(lambda _self, *a, **k: fn(*a, **k))(self, *args, **kw)

    @_again
    def complete(self, runs: list[Run] | None = None) -> None:
        """The columns the catalog leaves out (catalog.HEAVY), read for these runs (every run: None)."""
        runs = self.runs if runs is None else runs
        _complete_rows(self.store, [r.stored for r in runs if r.stored is not None])
        for r in runs:
            r.__dict__.pop("_info", None)

    @_again
    def health_counters(self, runs: list[Run], metrics: set[str]):
        """judge/gate_rows.py health_counters of `runs`' rows of `metrics`, summed by the engine."""
        import pandas as pd

        from triaudit.store.engine import quote, table
        from triaudit.store.load import sources_sql

        self.complete(runs)
        names = ", ".join(quote(m) for m in sorted(metrics))
        sql = sources_sql(
            self.store, runs, "tidy", "file, case_name, metric, max", f"status = 'ok' AND metric IN ({names})"
        )
        spelled = {r.rel(n): join(r.run_dir, n) for r in runs for n in r.names}
        if sql is None:
            return pd.DataFrame(columns=["file", "metric", "total"]), pd.DataFrame(columns=["file", "case"])
        import pyarrow as pa
        import pyarrow.compute as pc

        def frame(got: pa.Table) -> pd.DataFrame:
            """Text as categoricals (a fleet's files and cases, without a Python string per row)."""
            columns = {}
            for name in got.column_names:
                col = got.column(name)
                if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                    col = pc.dictionary_encode(col)
                columns[name] = col.to_pandas()
            return pd.DataFrame(columns)

        sums = frame(
            table(
                f"SELECT file, metric, SUM(CASE WHEN isnan(max) THEN 0 ELSE max END) AS total "
                f"FROM ({sql}) GROUP BY file, metric"
            )
        )
        pairs = frame(table(f"SELECT DISTINCT file, case_name AS case FROM ({sql})"))
        for t in (sums, pairs):
            t["file"] = t["file"].cat.rename_categories(lambda f: spelled.get(f, f))
        return sums, pairs

    def identities(self, runs: list[Run]) -> dict[str, dict]:
        """Each file's GPU (results/facts.py identity), from the store's facts, for files of `runs`
        whose contexts were read (load, contexts)."""
        self.complete(runs)
        return {f: self._who[f] for r in runs for f in r.files if f in self._who}

    @_again
    def load(self, runs: list[Run] | None = None, metrics: set[str] | None = None):
        """The ResultSet of `runs` (every run: None): their files' contexts, their RunInfos, the notes
        on them, and the tidy table's rows (of `metrics` and every row that is not ok, when given)."""
        from triaudit.results.table import ResultSet
        from triaudit.store.load import load_rows

        runs = self.runs if runs is None else runs
        self.complete(runs)
        contexts = self.contexts(runs)
        infos = {r.run_dir: r.info for r in runs}
        order = {f: i for i, f in enumerate(contexts)}
        rank = {}
        for r in runs:
            for n in r.names:
                f = join(r.run_dir, n)
                if f in order:
                    rank[r.rel(n)] = (order[f], f, infos[r.run_dir])
        table = load_rows(self.store, runs, contexts, rank, metrics)
        return ResultSet(table, contexts, infos, self.notes(runs))


class JsonSource:
    """The same questions answered from the JSON files alone (no store): everything read once, as
    before the store, and each answer cut from that."""

    def __init__(self, paths: list[Path]):
        from triaudit.results.table import load_results

        files, skipped = scan_paths(paths)
        self.skipped = skipped
        self.hosts = None  # every run is here (Source.hosts)
        self._files = files
        capture = Capture(Reading(files, []))
        self.rs = load_results([], capture)  # type: ignore[arg-type]  # a Reading, as load_results reads it
        by_dir: dict[str, list[Path]] = {}
        for f in files:
            by_dir.setdefault(str(f.parent), []).append(f)
        self.runs = []
        for d, fs in by_dir.items():
            info = self.rs.runs[d]
            row, _facts = run_row(info, {str(f): self.rs.contexts[str(f)] for f in fs}, capture.per_file, [], None)
            self.runs.append(Run(d, d, row, taken=[f.name for f in fs]))

    def files(self) -> list[Path]:
        return list(self._files)

    def notes(self, runs=None) -> list[str]:
        return list(self.rs.notes)

    def contexts(self, runs: list[Run]) -> dict[str, dict]:
        wanted = {f for r in runs for f in r.files}
        return {f: c for f, c in self.rs.contexts.items() if f in wanted}

    def health_counters(self, runs: list[Run], metrics: set[str]):
        return None  # the table holds them (judge/gate_rows.py sums them)

    def complete(self, runs=None) -> None:
        """Every row is whole here (store/rows.py computes them all)."""

    def identities(self, runs: list[Run]) -> dict[str, dict]:
        from triaudit.results.facts import identities

        files = {f for r in runs for f in r.files}
        return {f: w for f, w in identities(self.rs).items() if f in files}

    def load(self, runs: list[Run] | None = None, metrics: set[str] | None = None):
        from triaudit.results.table import ResultSet

        if runs is None or len(runs) == len(self.runs):
            return self.rs
        files = {f for r in runs for f in r.files}
        t = self.rs.table
        t = t[t["file"].isin(files).to_numpy()] if not t.empty else t
        contexts = {f: c for f, c in self.rs.contexts.items() if f in files}
        dirs = {r.run_dir for r in runs}
        return ResultSet(t, contexts, {d: i for d, i in self.rs.runs.items() if d in dirs}, list(self.rs.notes))


def open_source(paths: list[Path], with_samples: bool = False, newest_per_host: bool = False):
    """A Source over the store that indexes `paths`, or a JsonSource when none can be read.
    `newest_per_host` (the gate): of the runs the store holds unchanged, only each host's newest
    and those something is said of (catalog.read_newest), when that is all one folder holds."""
    paths = [Path(p) for p in paths]
    if newest_per_host and len(paths) == 1:
        got = _newest_source(paths[0])
        if got is not None:
            return got
    opened = _open_catalog(paths)
    if opened is None:
        return JsonSource(paths)
    store, catalog = opened
    collected = _Collect(store, catalog, len(paths) > 1)
    for p in paths:
        collected.path(p)
    return Source(store, collected, with_samples)


def _newest_source(path: Path):
    """The gate's Source of one folder from catalog.read_newest, or None: read the whole catalog
    (no store or an unreadable one, a path that is not a folder inside the store, a run folder
    changed or gone since it was added, a folder the store lacks)."""
    store = find_store(path)
    if store is None or not path.is_dir():
        return None
    if not (os.path.abspath(path) + "/").startswith(str(store.root).rstrip("/") + "/"):
        return None
    from triaudit.store.engine import missing

    if missing():
        return None
    from triaudit.store.catalog import StoreUnusable, read_newest

    try:
        newest = read_newest(store, store.rel(path))
    except StoreUnusable:
        return None  # said by the whole catalog's reading
    if newest is None:
        return None
    collected = _Collect(store, newest.kept, False, every=newest.every)
    collected.path(path)
    if collected.stale:
        return None
    source = Source(store, collected)
    source.hosts = newest.hosts
    return source


def _open_catalog(paths: list[Path]):
    """(the store that indexes every one of `paths`, its catalog), or None: read the JSON files."""
    stores = {s.root: s for s in (find_store(p) for p in paths) if s is not None}
    if len(stores) != 1:
        return None
    (store,) = stores.values()
    from triaudit.store.engine import missing

    why = missing()
    if why:
        _tell_once(f"note: the results store in {store.root / STORE_DIR} is not read: {why}")
        return None
    from triaudit.store.catalog import StoreUnusable, read_catalog

    try:
        return store, read_catalog(store)
    except StoreUnusable as exc:
        _tell_once(f"note: the results store is not read: {exc}")
        return None


def samples_of(paths: list[Path]) -> list[tuple[list[Path], list[str], Any]]:
    """For each path (a run folder, or a file), what judge/compare.py assemble_samples needs: its
    files in scan order, the scan's notes, and each file's samples (results/samples.py FileSamples),
    from the store's `samples` where it holds the run (one query for all paths), else its JSON."""
    from duckdb import IOException

    from triaudit.store.load import PartGone

    try:
        return _samples_of(paths)
    except (PartGone, IOException):  # a night merged meanwhile: once more, from the catalog as it is now
        return _samples_of(paths)


def _samples_of(paths: list[Path]) -> list[tuple[list[Path], list[str], Any]]:
    from triaudit.results.samples import file_samples

    paths = [Path(p) for p in paths]
    opened = _open_catalog(paths)
    if opened is None:
        out: list[tuple[list[Path], list[str], Any]] = []
        for p in paths:
            files, skipped = scan_paths([p])
            out.append((files, skipped, (file_samples(f) for f in files)))
        return out
    from triaudit.results.samples import CaseSample, FileSamples
    from triaudit.store.load import _loads, query

    store, catalog = opened
    sources = []
    for p in paths:
        collected = _Collect(store, catalog, False)
        collected.path(p)
        sources.append(Source(store, collected, with_samples=True))
    runs = [r for s in sources for r in s.runs]
    cases: dict[str, list] = {}
    got = query(
        store,
        runs,
        "samples",
        "file, case_index, case_name, status, message, metric, higher, repetitions, aggregates_only, algo, label",
    )
    if got is not None:
        columns = got.to_pydict()
        rows = sorted(zip(*columns.values()), key=lambda x: (x[0], x[1]))
        for f, _i, case, status, message, metric, higher, values, agg, algo, label in rows:
            cases.setdefault(f, []).append((case, status, message, metric, higher, values, agg, algo, label))
    got = query(store, runs, "files", "file, context, sample_notes")
    stored: dict[str, tuple[str, str]] = {}
    if got is not None:
        for f, ctx, notes in zip(*(got.column(c).to_pylist() for c in ("file", "context", "sample_notes"))):
            stored[f] = (ctx, notes)
    out = []
    for s in sources:
        per_file = []
        for r, n in s.ordered():
            rel = r.rel(n)
            if rel not in stored:
                continue
            ctx, notes = stored[rel]
            samples = [
                (
                    case,
                    CaseSample(
                        status, r.text(message), metric, bool(higher), list(values), bool(agg), tuple(algo), label
                    ),
                )
                for case, status, message, metric, higher, values, agg, algo, label in cases.get(rel, [])
            ]
            per_file.append(
                FileSamples(
                    Path(join(r.run_dir, n)), _loads(ctx), [r.text(x) for x in json.loads(notes)], r.info, samples
                )
            )
        out.append((s.files(), list(s.skipped), per_file))
    return out


class StoreReading:
    """A results/reading.py Reading whose files come from a results store: load_results takes its
    whole table at once (result_set) instead of parsing each file."""

    def __init__(self, source: Source):
        self.source = source
        self.files = source.files()
        self.notes = list(source.skipped)

    def result_set(self):
        rs = self.source.load()
        rs.notes[:0] = self.notes
        return rs

    def __iter__(self):  # never parsed file by file (load_results asks result_set first)
        return iter(())

    def close(self) -> None:
        pass


def open_reading(paths: list[Path]):
    """What `report` reads: the store's runs where one indexes `paths`, else a Reading of the JSON."""
    paths = [Path(p) for p in paths]
    opened = _open_catalog(paths)
    if opened is None:
        return Reading.start(paths)
    store, catalog = opened
    collected = _Collect(store, catalog, len(paths) > 1)
    for p in paths:
        collected.path(p)
    return StoreReading(Source(store, collected))
