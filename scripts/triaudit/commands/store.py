"""`triaudit store update|rebuild RESULTS`: the results store beside the JSON folders (store/): the
index gate, outliers, floors derive, history, report and figures read many runs from. `run`,
`import`, `soak` and `slurm collect` add each run as they write it; `update` adds what they could not
(a GPU machine without DuckDB and pyarrow, runs copied in) and merges each night's files; `rebuild`
makes the store anew from the JSON folders, aside, and swaps it in. Exit 0 done, 1 a run folder
could not be added (named, with why), 2 bad input."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.core.errors import EXIT_FOUND, TriauditError
from triaudit.core.io.rows import FOLDER, INPUT, PathOption, Row

_WHERE = "`RESULTS/.triaudit-store/` (Parquet, partitioned by card and night)"
IO = {
    "update": Row(
        command="store update",
        paths=(PathOption("results", "results", INPUT, FOLDER),),
        writes=f"{_WHERE}: the runs it lacks added, each night's files merged; each file written aside and renamed",
        refuses="a result file or run folder (never written); a store of another format (rebuild it)",
        codes=(0, 1, 2, 130),
    ),
    "rebuild": Row(
        command="store rebuild",
        paths=(PathOption("results", "results", INPUT, FOLDER),),
        writes=f"{_WHERE}, made anew aside from the JSON folders and put in place by a rename",
        refuses="a result file or run folder (never written); an interrupted rebuild leaves the old store",
        codes=(0, 1, 2, 130),
    ),
}


def add_parser(sub) -> None:
    s = sub.add_parser(
        "store",
        help="the results store: an index of the JSON folders that gate, outliers, floors derive, history and "
        "report read many runs from (docs/fleet.md)",
    )
    ss = s.add_subparsers(dest="store_command", required=True)
    u = ss.add_parser(
        "update",
        help="add every run under RESULTS the store lacks, merge each night's files (exit 0 done, 1 a run not "
        "added, 2 bad input)",
    )
    u.add_argument("results", type=Path, help="a results folder (its store is there or in a folder above it)")
    u.set_defaults(func=run_update)
    r = ss.add_parser(
        "rebuild",
        help="make RESULTS/.triaudit-store anew from the JSON folders, aside, and swap it in (exit 0 done, 1 a run "
        "not added, 2 bad input)",
    )
    r.add_argument("results", type=Path, help="the results folder to index")
    r.set_defaults(func=run_rebuild)


def _ready() -> None:
    from triaudit.store.engine import missing

    why = missing()
    if why:
        raise TriauditError(f"the results store needs DuckDB and pyarrow: {why}")


def _report(got: dict, verb: str) -> int:
    for p in got["problems"]:
        say(f"- {p}")
    say(
        f"{got['store']}: {got['added']} run(s) {verb}"
        + (f", {got['merged']} night(s) merged" if "merged" in got else "")
    )
    return EXIT_FOUND if got["problems"] else 0


def run_update(a) -> int:
    _ready()
    from triaudit.store.compact import update

    return _report(update(a.results, say), "added")


def run_rebuild(a) -> int:
    _ready()
    from triaudit.store.compact import rebuild

    return _report(rebuild(a.results, say), "indexed")
