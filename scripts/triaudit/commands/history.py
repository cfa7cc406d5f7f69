"""`triaudit history RUN...`: trend plots of a series of runs of one machine, regressions marked
(judge/compare.py history). Exit 1 when the newest run regressed, 3 when nothing could be judged."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.commands.statistics import stat_args
from triaudit.core import argtypes
from triaudit.core.io.rows import INPUT, OUTPUT_FOLDER, PathOption, Row

IO = Row(
    command="history",
    paths=(PathOption("runs", "runs", INPUT), PathOption("out", "--out", OUTPUT_FOLDER)),
    writes="`--out/history.png`, `history.csv`, put in place together; `.triaudit-history.json` lists them",
    refuses="an input, a run folder, or a folder inside or above one as `--out`; a file of those names that "
    "history did not write",
    codes=(0, 1, 2, 3, 130),
    files=("history.png", "history.csv"),
)


def add_parser(sub) -> None:
    h = sub.add_parser("history", help="trend plots of a series of runs of one machine, regressions marked")
    h.add_argument("runs", type=Path, nargs="+", help="run folders of one card, ordered by name (timestamp)")
    h.add_argument(
        "--out", type=argtypes.out_folder, default=Path("history"), help="folder for history.png and history.csv"
    )
    h.add_argument("--cases", default="", help="regular expression selecting cases")
    stat_args(h)
    h.set_defaults(func=run)


def run(a) -> int:
    from triaudit.core.io.outputs import OutputFolder
    from triaudit.judge import compare as C
    from triaudit.results.case_info import SYNTHETIC, SYNTHETIC_BANNER

    folder = OutputFolder(a.out, "history")  # built aside, put in place whole (core/io/outputs.py)
    try:
        folder.check(list(IO.files))  # a user's history.csv is refused before anything is computed
        _, table = C.history(a.runs, folder.staging, a.cases, a.alpha, a.min_effect, a.min_repetitions)
        written = folder.adopt()
        folder.commit()
    finally:
        folder.discard()
    synthetic = sorted(set(table.loc[table["provenance"] == SYNTHETIC, "run"]))
    if synthetic:
        say(f"{SYNTHETIC_BANNER} (synthetic runs: {', '.join(synthetic)})")
    slower = table[table["verdict"] == "slower"]
    for p in written:
        say(f"wrote {p}")
    for _, r in slower.iterrows():
        say(f"regression: {r['case']} in {r['run']}")
    return 1 if not slower.empty else 0
