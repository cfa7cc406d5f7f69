"""The `triaudit outliers` command line (outliers.py does the judging). Kept apart so that
building the parser imports no third-party package: `triaudit run` runs on bare GPU nodes."""

from __future__ import annotations

import sys
from pathlib import Path


def cmd_outliers(a) -> int:
    from triaudit.judge import outliers as O
    from triaudit.results.gbench import LoadError
    from triaudit.results.reading import expand_paths

    try:
        j = O.find_outliers(a.results, a.threshold, a.cases)
    except (O.OutlierError, LoadError) as exc:
        print(f"triaudit outliers: {exc}", file=sys.stderr)
        return O.EXIT_BAD_INPUT
    md = O.summary_markdown(j)
    if a.markdown:
        inputs = {p.resolve() for p in expand_paths(a.results)}
        if a.markdown.resolve() in inputs:
            print(f"triaudit outliers: refusing to write over an input: {a.markdown}", file=sys.stderr)
            return O.EXIT_BAD_INPUT
        try:
            a.markdown.write_text(md + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"triaudit outliers: --markdown {a.markdown}: {exc.strerror or exc}", file=sys.stderr)
            return O.EXIT_BAD_INPUT
    print(md)
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
    o.add_argument("--markdown", type=Path, help="also write the summary here (e.g. $GITHUB_STEP_SUMMARY)")
    o.set_defaults(func=cmd_outliers)
