"""`triaudit compare BASELINE NEW`: a verdict per case (judge/compare.py). Exit 0 no regression,
1 a regression, 2 bad input, 3 nothing could be judged."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.commands.statistics import stat_args
from triaudit.core.errors import TriauditError
from triaudit.core.io.outputs import append
from triaudit.core.io.rows import APPEND, INPUT, PathOption, Row

IO = Row(
    command="compare",
    paths=(
        PathOption("baseline", "baseline", INPUT),
        PathOption("new", "new", INPUT),
        PathOption("markdown", "--markdown", APPEND),
    ),
    writes="stdout; `--markdown FILE` is **appended to**",
    refuses="an input, or a file inside one, as `--markdown`; a FIFO",
    codes=(0, 1, 2, 3, 130),
)


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
    if a.markdown:  # never an input nor inside one (core/io/checks.py, before anything was read)
        append(a.markdown, md + "\n")  # appended: GitHub's step summary collects every step's
    code = C.exit_code(result.table)
    say(md)
    return code
