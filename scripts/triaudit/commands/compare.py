"""`triaudit compare BASELINE NEW`: a verdict per case (judge/compare.py). Exit 0 no regression,
1 a regression, 2 bad input, 3 nothing could be judged."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.commands.statistics import stat_args
from triaudit.core.errors import TriauditError
from triaudit.core.files import append_text


def add_parser(sub) -> None:
    c = sub.add_parser(
        "compare",
        help="verdict per case between two runs: exit 0 no regression, 1 regression, "
        "2 bad input, 3 nothing could be judged",
    )
    c.add_argument("baseline", type=Path, help="the baseline run (a run folder or result files)")
    c.add_argument("new", type=Path, help="the run to judge against it")
    stat_args(c)
    c.add_argument(
        "--max-untested-change",
        type=float,
        default=0.10,
        help="a slowdown larger than this that too few repetitions could not test fails the gate (0.10 = 10%%)",
    )
    c.add_argument(
        "--allow-algo-change",
        action="store_true",
        help="judge GEMM cases whose cuBLASLt algorithm changed like the others (still listed)",
    )
    c.add_argument("--allow-different", action="store_true", help="compare different GPU models, drivers or clocks")
    c.add_argument("--allow-incomplete", action="store_true", help="compare interrupted runs")
    c.add_argument(
        "--markdown",
        type=Path,
        help="also append the summary to this file (made if missing; e.g. $GITHUB_STEP_SUMMARY)",
    )
    c.set_defaults(func=run)


def run(a) -> int:
    from triaudit.judge import compare as C
    from triaudit.results.reading import scan_paths

    if not 0 <= a.max_untested_change:
        raise TriauditError(f"--max-untested-change {a.max_untested_change}: must be 0 or more (0.10 = 10 %)")
    result = C.compare(
        a.baseline,
        a.new,
        a.alpha,
        a.min_effect,
        a.min_repetitions,
        a.allow_different,
        a.allow_incomplete,
        a.max_untested_change,
        a.allow_algo_change,
    )
    md = C.summary_markdown(result, str(a.baseline), str(a.new))
    if a.markdown:
        inputs = {p.resolve() for p in (a.baseline, a.new)} | {f.resolve() for f in scan_paths([a.baseline, a.new])[0]}
        if a.markdown.resolve() in inputs:
            raise TriauditError(f"refusing to write over an input: {a.markdown}")
        try:
            append_text(a.markdown, md + "\n")  # appended: GitHub's step summary collects every step's
        except OSError as exc:
            raise TriauditError(f"--markdown {a.markdown}: cannot be written: {exc.strerror or exc}") from None
    code = C.exit_code(result.table)
    say(md)
    return code
