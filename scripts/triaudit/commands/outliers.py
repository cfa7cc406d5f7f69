"""`triaudit outliers RESULTS...`: the GPUs of a fleet slower than their siblings (judge/outliers.py).
Exit 0 none, 1 outliers, 2 bad input, 3 too few GPUs."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.core.errors import TriauditError
from triaudit.core.files import append_text


def run(a) -> int:
    from triaudit.judge import outliers as O
    from triaudit.results.reading import expand_paths

    j = O.find_outliers(a.results, a.threshold, a.cases)
    md = O.summary_markdown(j)
    if a.markdown:
        inputs = {p.resolve() for p in expand_paths(a.results)}
        if a.markdown.resolve() in inputs:
            raise TriauditError(f"refusing to write over an input: {a.markdown}")
        try:
            append_text(a.markdown, md + "\n")  # appended: GitHub's step summary collects every step's
        except OSError as exc:
            raise TriauditError(f"--markdown {a.markdown}: cannot be written: {exc.strerror or exc}") from None
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
