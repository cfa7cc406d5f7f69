"""Where the results store lives and how its folder is laid out. Standard library only: `run` finds
its store on bare GPU machines before it knows whether it can write one.

    <results>/.triaudit-store/
        store.json                                        the store's format; which triaudit made it
        runs/card=<card>/night=<YYYY-MM-DD>/<part>.parquet    a row per run: its manifest, notes, dates
        files/card=.../night=.../<part>.parquet           a row per result file: context, GPU, facts
        tidy/card=.../night=.../<part>.parquet            a row per (file, case, counter): the tidy table
        samples/card=.../night=.../<part>.parquet         a row per (file, case): its repetitions
        locks/                                            who is compacting which partition

Hive-style partitions (card, night), plain Parquet files: DuckDB, Spark and Trino read the folders as
they are. A run's rows are in the file of the same name in each dataset: `r-<run>-<version>.parquet`
when a run is added, `c-<time>-<pid>.parquet` once a night's files are merged (compact.py). The
folder name starts with a dot: result readers never take it for results.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

STORE_DIR = ".triaudit-store"
META = "store.json"
# What a store's files mean. Raised when what adding a run computes changes (the tidy rows' rules,
# a column, the facts): a reader never mixes formats, and says to rebuild the store.
FORMAT = 1
DATASETS = ("runs", "files", "tidy", "samples")
RUN_MARK = "\u27e8run\u27e9"  # "⟨run⟩" stands for a run folder's path in stored text (a reader puts its own back)
UNKNOWN_NIGHT = "unknown"
_DIGITS = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})")


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "unknown"


def night_of(started: str) -> str:
    """The UTC night a run started (a RunInfo's `started`: 20261101T020000Z, or an ISO date)."""
    m = _DIGITS.match(started or "")
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else UNKNOWN_NIGHT


def partition(card: str, night: str) -> str:
    return f"card={slug(card)}/night={night}"


def part_name(run_rel: str, version: int) -> str:
    """The files that hold one run when it is added, named by its folder and the folder's version."""
    return f"r-{hashlib.sha1(run_rel.encode()).hexdigest()[:16]}-{version}.parquet"


class Store:
    """A store's folder (absolute, as the user's paths reach it; symbolic links not resolved)."""

    def __init__(self, root: Path):
        self.root = Path(os.path.abspath(root))  # the results folder the store indexes
        self.dir = self.root / STORE_DIR

    def dataset(self, name: str) -> Path:
        return self.dir / name

    def meta(self) -> dict:
        try:
            data = json.loads((self.dir / META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def exists(self) -> bool:
        return (self.dir / META).is_file()

    def rel(self, path: Path) -> str:
        """A path under the store's folder as the store names it: POSIX, relative, "." for the root."""
        return Path(os.path.relpath(os.path.abspath(path), self.root)).as_posix()

    def __repr__(self) -> str:
        return f"Store({self.root})"


def find_store(path: Path) -> Store | None:
    """The store that indexes `path`: in it or the nearest folder above it holding one."""
    here = Path(os.path.abspath(path))
    if not here.is_dir():
        here = here.parent
    for p in (here, *here.parents):
        if (p / STORE_DIR / META).is_file():
            return Store(p)
    return None


def store_for_writing(results: Path) -> Store:
    """Where a new run under `results` is added: the store that already indexes `results` (a Slurm
    job's folder inside a fleet's results), else a new one in `results`."""
    return find_store(results) or Store(results)


def under(rel: str, scope: str) -> bool:
    """Whether the store path `rel` is `scope` or lies inside it."""
    return scope == "." or rel == scope or rel.startswith(scope + "/")


def ancestors(rel: str, scope: str) -> list[str]:
    """The folders from `scope` down to `rel`'s parent (store paths), `scope` first."""
    if rel == scope or not under(rel, scope):
        return []
    parts = rel.split("/")
    out = []
    for i in range(len(parts) - 1, 0, -1):
        a = "/".join(parts[:i])
        if not under(a, scope):
            break
        out.append(a)
    if scope == ".":
        out.append(".")
    return out[::-1]
