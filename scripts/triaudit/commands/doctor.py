"""`triaudit doctor`: GPUs, driver, build and link checked before measuring (doctor/checks.py).
Standard library only: it runs on bare GPU machines."""

from __future__ import annotations

import json
from pathlib import Path

from triaudit.commands.console import say
from triaudit.core.errors import TriauditError
from triaudit.core.io.rows import FILE, FOLDER, INPUT, PathOption, Row
from triaudit.doctor.interconnect import InputError

IO = Row(
    command="doctor",
    paths=(
        PathOption("build_dir", "--build-dir", INPUT, FOLDER),
        PathOption("topo_file", "--topo-file", INPUT, FILE),
        PathOption("nccl_log", "--nccl-log", INPUT, FILE),
    ),
    writes="stdout only (`--json` for machines)",
    refuses="a FIFO as `--topo-file` or `--nccl-log`; a `--build-dir` that is missing",
    codes=(0, 1, 2, 77, 130),
)


def add_parser(sub) -> None:
    p = sub.add_parser("doctor", help="check GPUs, driver, build and link before measuring")
    p.add_argument("--build-dir", type=Path, default=None, help="the build folder (default: build/gpu, else build/ci)")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--topo-file", type=Path, help="a saved `nvidia-smi topo -m` (or -mp) output to check instead of this machine's"
    )
    p.add_argument(
        "--nccl-log",
        type=Path,
        help="a saved NCCL_DEBUG=INFO log: report NCCL's path from it instead of running a small NCCL collective",
    )
    p.add_argument(
        "--no-nccl-run", action="store_true", help="do not run the small NCCL collective that shows NCCL's path"
    )
    p.set_defaults(func=run)


def run(a) -> int:
    from triaudit.core.builddir import find_build_dir
    from triaudit.doctor.checks import diagnose, exit_code, render

    build_dir, _ = find_build_dir(a.build_dir)  # none found: the report says no executables were built
    try:
        r = diagnose(
            build_dir or Path("build/gpu"), topo_file=a.topo_file, nccl_log=a.nccl_log, run_nccl=not a.no_nccl_run
        )
    except InputError as e:
        raise TriauditError(str(e)) from None
    code = exit_code(r)
    if code == 77 and (a.topo_file or a.nccl_log):
        code = 1 if r.problems else 0  # no GPU here, but the dumps given were judged
    if a.json:
        say(
            json.dumps(
                {
                    "sections": r.sections,
                    "gpus": r.gpus,
                    "problems": r.problems,
                    "warnings": r.warnings,
                    "exit_code": code,
                },
                indent=2,
            )
        )
    else:
        say(render(r))
        if not r.gpus and (a.topo_file or a.nccl_log) and not r.problems:
            say("no problems found in the given dumps")
    return code
