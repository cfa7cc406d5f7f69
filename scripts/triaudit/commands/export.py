"""`triaudit export RUN --format bmf|github-action-benchmark`: a run's figures for dashboards
(results/export.py)."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.core import argtypes


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
    from triaudit.results import export as E

    written, said = E.export(a.paths, a.format, a.out)
    for line in said:
        say(line)
    for p in written:
        say(f"wrote {p}")
    return 0
