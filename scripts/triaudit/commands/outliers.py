"""`triaudit outliers RESULTS...`: the GPUs of a fleet slower than their siblings (judge/outliers.py).
Exit 0 none, 1 outliers, 2 bad input, 3 too few GPUs."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.core.io.outputs import append
from triaudit.core.io.rows import APPEND, INPUT, PathOption, Row

IO = Row(
    command="outliers",
    paths=(PathOption("results", "results", INPUT), PathOption("markdown", "--markdown", APPEND)),
    writes="stdout; `--markdown FILE` is appended to",
    refuses="an input, or a file inside one, as `--markdown`",
    codes=(0, 1, 2, 3, 130),
)


def run(a) -> int:
    from triaudit.judge import outliers as O

    j = O.find_outliers(a.results, a.threshold, a.cases)
    md = O.summary_markdown(j)
    if a.markdown:  # never an input nor inside one (core/io/checks.py, before anything was read)
        append(a.markdown, md + "\n")  # appended: GitHub's step summary collects every step's
    say(md)
    return O.exit_code(j)


def add_parser(sub) -> None:
    o = sub.add_parser(
        "outliers",
        help="name the GPUs of a fleet that are slower than their siblings "
        "(exit 0 none, 1 outliers, 2 bad input, 3 too few GPUs)",
    )
    o.add_argument("results", type=Path, nargs="+", help="result files or folders (a fleet job's folder)")
    o.add_argument(
        "--threshold",
        type=float,
        default=0.05,
        help="how far below the group median counts (0.05 = 5 %%), beside the robust-spread test",
    )
    o.add_argument("--cases", default="", help="regular expression selecting cases")
    o.add_argument(
        "--markdown",
        type=Path,
        help="also append the summary to this file (made if missing; e.g. $GITHUB_STEP_SUMMARY)",
    )
    o.set_defaults(func=run)
