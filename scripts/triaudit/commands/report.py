"""`triaudit report`: tables (Markdown, CSV), plots and one HTML page from result files or folders
(report/page.py)."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.core import argtypes
from triaudit.core.errors import TriauditError
from triaudit.core.io.rows import FILE, INPUT, OUTPUT_FOLDER, PathOption, Row

IO = Row(
    command="report",
    paths=(
        PathOption("paths", "paths", INPUT),
        PathOption("results", "--results", INPUT, used=lambda a: not a.paths),
        PathOption("prices", "--prices", INPUT, FILE, nonempty=True),
        PathOption("out", "--out", OUTPUT_FOLDER),
    ),
    writes="the `--out` folder, built aside and put in place whole; `.triaudit-report.json` in it lists what it wrote",
    refuses="an input, a run folder, or a folder inside or above one as `--out`; a file in `--out` that no report "
    "wrote (only listed files of the last report are removed); a FIFO as `--prices`",
    codes=(0, 2, 130),
    files=("report.md", "report.html", "summary.md"),
)


def add_parser(sub) -> None:
    rep = sub.add_parser("report", help="tables (Markdown, CSV) and plots from result files or folders")
    rep.add_argument("paths", nargs="*", type=Path, help="result files or folders (default: --results)")
    rep.add_argument(
        "--results", type=Path, default=Path("results"), help="results folder read when no paths are given"
    )
    rep.add_argument(
        "--out",
        type=argtypes.out_folder,
        default=Path("report"),
        help="folder for report.md, report.html, the CSV tables and PNG plots (made if missing)",
    )
    rep.add_argument("--include-incomplete", action="store_true", help="include interrupted runs (left out by default)")
    rep.add_argument(
        "--note",
        action="append",
        metavar="TEXT",
        help="a line for the top of the report (repeatable), e.g. why this machine measured nothing",
    )
    rep.add_argument(
        "--all-runs",
        action="store_true",
        help="every run its own column (default: each card's newest complete run, named once per section)",
    )
    rep.add_argument(
        "--prices",
        type=Path,
        default=None,
        metavar="PRICES.toml",
        help="your prices per card (rent or buy; format: scripts/prices.template.toml): adds cost tables",
    )
    rep.add_argument(
        "--tidy-csv",
        action="store_true",
        help="also write tidy.csv: every row of the table the report is made from (large for a fleet)",
    )
    rep.set_defaults(func=run)


def run(a) -> int:
    from triaudit.report import page
    from triaudit.report.sections.cost import PricesError, load_prices
    from triaudit.results import reading as R

    prices = None
    if a.prices is not None:  # read before anything is written: a bad file writes no report
        try:
            prices = load_prices(a.prices)
        except PricesError as exc:  # the prices file, named, and what is wrong in it
            raise TriauditError(f"--prices {exc}") from None
    with R.collector_paused():  # the report makes millions of objects and frees none until the end
        try:
            written = page.write_report(
                a.paths or [a.results],
                a.out,
                a.include_incomplete,
                all_runs=a.all_runs,
                prices=prices,
                notes=tuple(a.note or ()),
                tidy_csv=a.tidy_csv,
            )
        except PricesError as exc:
            raise TriauditError(f"--prices {exc}") from None
    for p in written:
        say(f"wrote {p}")
    return 0
