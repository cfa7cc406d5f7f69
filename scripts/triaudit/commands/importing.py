"""`triaudit import TOOL FILE...`: peer tools' outputs into a new run folder (peers/importer.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from triaudit.commands.console import say
from triaudit.core.io.rows import FILE, INPUT, RESULTS, PathOption, Row

IO = Row(
    command="import",
    paths=(PathOption("files", "files", INPUT, FILE), PathOption("results", "--results", RESULTS)),
    writes="a new `results/<card>/<stamp>-import-<tool>/`",
    refuses="a malformed output (file, line, what was expected); a `--card` that contradicts the output, unless "
    "`--force`; a FIFO; an empty `--results`",
    codes=(0, 1, 2, 130),
)


def add_parser(sub) -> None:
    im = sub.add_parser(
        "import",
        help="read peer tools' outputs (nccl-tests, nvbandwidth, babelstream, mamf-finder) "
        "into a new run folder under --results/<card>/",
    )
    im.add_argument("tool", help="nccl-tests, nvbandwidth, babelstream or mamf-finder")
    im.add_argument("files", type=Path, nargs="+", help="the tool's output files (text or JSON/CSV as it wrote them)")
    im.add_argument("--card", help="the GPU name as CUDA reports it, when the output does not say")
    im.add_argument(
        "--force", action="store_true", help="file the output under --card even though it names another GPU"
    )
    im.add_argument("--results", type=Path, required=True, help="results folder (the run goes into <results>/<card>/)")
    im.add_argument("--buffer-size", help="nvbandwidth's copy size (-b), which it does not print, e.g. 512MiB")
    im.set_defaults(func=run)


def _out(text: str, file=None) -> None:
    if file is sys.stderr:
        print(text, file=sys.stderr, flush=True)
    else:
        say(text)


def run(a) -> int:
    from triaudit.peers.importer import run_import

    given = [a.tool, *map(str, a.files)] + (["--card", a.card] if a.card else []) + (["--force"] if a.force else [])
    return run_import(
        a.tool, a.files, a.results, a.card, a.buffer_size, "triaudit import " + " ".join(given), _out, a.force
    )
