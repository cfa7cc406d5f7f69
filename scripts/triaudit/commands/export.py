"""`triaudit export RUN --format bmf|github-action-benchmark`: a run's figures for dashboards
(results/export.py)."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.core import argtypes
from triaudit.core.io.rows import INPUT, OUTPUT_FOLDER, PathOption, Row

IO = Row(
    command="export",
    paths=(PathOption("paths", "paths", INPUT), PathOption("out", "--out", OUTPUT_FOLDER)),
    writes="`--out/bmf.json`, or `bigger_is_better.json` and `smaller_is_better.json`, put in place together; "
    "`.triaudit-export.json` lists them",
    refuses="an input, a run folder, or a folder inside or above one as `--out`; a file of those names that "
    "export did not write",
    codes=(0, 2, 130),
    files=("bmf.json", "bigger_is_better.json", "smaller_is_better.json"),
)


def add_parser(sub) -> None:
    ex = sub.add_parser(
        "export",
        help="a run's figures for dashboards: Bencher Metric Format or "
        "github-action-benchmark (customBiggerIsBetter / customSmallerIsBetter)",
    )
    ex.add_argument("paths", nargs="+", type=Path, help="a run folder (or result files) of one card")
    ex.add_argument(
        "--format", required=True, choices=["bmf", "github-action-benchmark"], help="the dashboard's format"
    )
    ex.add_argument(
        "--out",
        type=argtypes.out_folder,
        default=Path("export"),
        help="folder for bmf.json, or bigger_is_better.json and smaller_is_better.json",
    )
    ex.set_defaults(func=run)


def run(a) -> int:
    from triaudit.core.io.outputs import OutputFolder
    from triaudit.results import export as E

    folder = OutputFolder(a.out, "export")  # built aside, put in place whole (core/io/outputs.py)
    try:
        names = ["bmf.json"] if a.format == "bmf" else ["bigger_is_better.json", "smaller_is_better.json"]
        folder.check(names)  # a user's bmf.json is refused before anything is computed
        _, said = E.export(a.paths, a.format, folder.staging)
        written = folder.adopt()
        folder.commit()
    finally:
        folder.discard()
    for line in said:
        say(line)
    for p in written:
        say(f"wrote {p}")
    return 0
