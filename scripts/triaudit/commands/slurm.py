"""`triaudit slurm submit|collect`: the fleet under Slurm (fleet/slurm.py): one whole-node job per
node, then the fleet report. Building the parser imports no third-party package."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from triaudit.commands.console import say
from triaudit.core import argtypes
from triaudit.core.errors import TriauditError
from triaudit.core.io.rows import RESULTS, PathOption, Row
from triaudit.runner.profiles import PROFILES

IO = {
    "submit": Row(
        command="slurm submit",
        paths=(PathOption("results", "--results", RESULTS),),  # --build-dir: submit checks it, naming why
        writes="the job script into `--results`; the job writes `job-<id>/` there",
        refuses="a `--results` that is a file; a missing `--build-dir`",
        codes=(0, 2, 130),
    ),
    "collect": Row(
        command="slurm collect",
        paths=(PathOption("results", "--results", RESULTS),),
        writes="`job-<id>/report/`, or `report-2`, `report-3` … when one exists",
        refuses="an earlier report (a new folder each time); a negative or non-finite `--wait-s`",
        codes=(0, 1, 2, 3, 77, 130),
    ),
}


def cmd_submit(a) -> int:
    from triaudit.fleet.slurm import submit

    extra = list(a.sbatch_args or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    try:
        job_id, script = submit(a.nodes, a.results, a.build_dir, a.profile, a.partition, a.time, extra, a.run_args)
    except (OSError, subprocess.SubprocessError) as exc:
        raise TriauditError(str(exc)) from None
    say(job_id)
    print(
        f"submitted job {job_id} ({a.nodes} node(s)); script kept as {script}; results will be in "
        f"{a.results.resolve()}/job-{job_id}; then: triaudit slurm collect {job_id} --results {a.results}",
        file=sys.stderr,
        flush=True,
    )
    return 0


def cmd_collect(a) -> int:
    from triaudit.fleet.slurm import collect

    try:
        return collect(a.job_id, a.results, a.wait_s, say)
    except OSError as exc:
        raise TriauditError(str(exc)) from None


def add_parser(sub) -> None:
    s = sub.add_parser("slurm", help="the fleet under Slurm: submit a whole-node job per node, collect it")
    ss = s.add_subparsers(dest="slurm_command", required=True)
    p = ss.add_parser("submit", help="write the job script into the results folder, sbatch it, print the job id")
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--partition", default=None)
    p.add_argument("--time", default=None, help="time limit, as sbatch takes it (e.g. 0:30:00)")
    p.add_argument(
        "--results",
        type=Path,
        default=Path("results/fleet"),
        help="shared results folder; the job writes into job-<id>/ there",
    )
    p.add_argument("--build-dir", type=Path, default=Path("build/gpu"))
    p.add_argument("--profile", default="quick", choices=sorted(PROFILES))
    p.add_argument("--run-args", default="", help="more options for each node's run, e.g. '--budget-s 600'")
    p.add_argument(
        "sbatch_args", nargs=argparse.REMAINDER, help="after --: options for sbatch (e.g. --gpus-per-node=8)"
    )
    p.set_defaults(func=cmd_submit)
    c = ss.add_parser(
        "collect",
        help="wait for a fleet job, say which nodes failed or timed out, run the fleet report "
        "(exit 0 all measured and no outlier, 1 a node failed or an outlier, 2 bad "
        "input, 3 nothing judged, 77 no node had a CUDA device)",
    )
    c.add_argument("job_id")
    c.add_argument("--results", type=Path, default=Path("results/fleet"))
    c.add_argument(
        "--wait-s",
        type=argtypes.non_negative,
        default=None,
        help="wait at most this long (default: until the job ends)",
    )
    c.set_defaults(func=cmd_collect)
