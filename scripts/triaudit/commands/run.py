"""`triaudit run`: the built executables into results/<card>/<timestamp>-<host>/ (runner/suite.py),
or with --all-gpus every GPU of this host at once (fleet/node_run.py). Standard library only, like
the runner: it runs on bare GPU machines."""

from __future__ import annotations

import threading
from pathlib import Path

from triaudit.commands.console import say
from triaudit.core.errors import TriauditError
from triaudit.core.io.rows import FOLDER, INPUT, RESULTS, PathOption, Row
from triaudit.runner import profiles

IO = Row(
    command="run",
    paths=(PathOption("build_dir", "--build-dir", INPUT, FOLDER), PathOption("results", "--results", RESULTS)),
    writes="a new `results/<card>/<UTC stamp>-<host>/` (JSON + log per executable, `manifest.json`); an executable "
    "killed or hung keeps its finished cases; a run with no GPU result stays in `results/.incoming/`",
    refuses="an earlier run (a new folder name every time); a `--results` that is a file; `--benchmark_out`/"
    "`--force` after `--`; `--benchmark_repetitions` below 1 after `--`",
    codes=(0, 1, 2, 77, 130),
)


def add_parser(sub) -> None:
    r = sub.add_parser("run", help="run the built executables into results/<card>/<timestamp>-<host>/")
    r.add_argument(
        "--build-dir",
        type=Path,
        default=None,
        help="the build folder (default: build/gpu, else build/ci, here or in this checkout)",
    )
    r.add_argument(
        "--results", type=Path, default=Path("results"), help="results folder (runs go to <results>/<card>/)"
    )
    r.add_argument(
        "--profile",
        default="quick",
        choices=sorted(profiles.PROFILES),
        help="quick: the nightly minute; full: the ~5-minute set; exhaustive: every case (all 5 repetitions)",
    )
    r.add_argument("--only", default="", help="comma-separated executables or steps (stream, gemm, gemm_ladder, ...)")
    r.add_argument(
        "--timeout-s",
        type=float,
        default=None,
        help="stop an executable running longer than this (exit 124); each is also capped at its estimate x 3 + 30 s",
    )
    r.add_argument(
        "--budget-s",
        type=float,
        default=None,
        help="seconds for the whole run: each executable gets what is left; none starts with under 20 s",
    )
    r.add_argument(
        "--all-gpus",
        action="store_true",
        help="every GPU of this host at once, one process per GPU (fleet/node_run.py)",
    )
    r.add_argument("--gpus", default="", help="with --all-gpus: GPU indices as nvidia-smi numbers them, e.g. 0,3")
    r.add_argument(
        "--bind-numa",
        default="on",
        choices=["on", "off"],
        help="bind each executable's CPUs and memory to its GPU's NUMA node (nvbandwidth does; default on)",
    )
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="print the estimated wall time per executable for the profile on a card; run nothing",
    )
    r.add_argument(
        "--card", default=None, help="with --dry-run: the card's key in core/specs.py (default: the local GPU)"
    )
    r.add_argument(
        "--gpu-count", type=int, default=1, help="with --dry-run: GPUs on the machine (p2p, the collectives)"
    )
    r.add_argument("extra", nargs="*", help="extra arguments for every executable (after --)")
    r.set_defaults(func=run)


def run(a) -> int:
    from triaudit.core.builddir import find_build_dir
    from triaudit.runner import suite

    only = [x for x in a.only.split(",") if x] or None
    bad = (
        profiles.check_only(only)
        or profiles.check_extra(a.extra)
        or suite.check_seconds("--budget-s", a.budget_s)
        or suite.check_seconds("--timeout-s", a.timeout_s)
    )
    if bad:
        raise TriauditError(bad)
    _check_repetitions(a.extra)
    if a.dry_run:
        if a.gpu_count < 1:
            raise TriauditError(f"--gpu-count {a.gpu_count}: at least 1")
        out = suite.dry_run(a.build_dir, a.profile, a.card, only, a.extra, a.gpu_count)
        if out.exit_code != 0:
            raise TriauditError(out.message, out.exit_code)
        say(out.message)
        return 0
    build_dir, found = find_build_dir(a.build_dir)
    if build_dir is None:
        raise TriauditError(found)
    if found:
        say(found)
    if a.gpus and not a.all_gpus:
        raise TriauditError("--gpus picks GPUs for --all-gpus; add --all-gpus")
    if a.all_gpus:
        return _all_gpus(a, build_dir, only)
    out = suite.run_suite(
        build_dir,
        a.results,
        a.profile,
        only,
        a.extra,
        log=say,
        timeout_s=a.timeout_s,
        budget_s=a.budget_s,
        bind_numa=a.bind_numa,
    )
    if out.exit_code == 2:
        raise TriauditError(out.message)
    say(out.message)
    _add_to_store(a.results, out.run_dir)
    return out.exit_code


def _add_to_store(results: Path, run_dir: Path | None) -> None:
    """The run just written, added to its results store (store/hooks.py: said, never fatal, where the
    store cannot be written; a run kept in .incoming is not a run yet)."""
    if run_dir is not None and ".incoming" not in Path(run_dir).parts:
        from triaudit.store.hooks import add_after_writing

        add_after_writing(results, run_dir, say)


def _check_repetitions(extra: list[str] | None) -> None:
    """`--benchmark_repetitions` below 1 is bad input (the executables exit 2 on it): refused here,
    before a run folder is made, instead of a run whose every executable failed (exit 1)."""
    for arg in extra or []:
        if arg.startswith("--benchmark_repetitions="):
            value = arg.split("=", 1)[1]
            try:
                ok = int(value) >= 1
            except ValueError:
                ok = False
            if not ok:
                raise TriauditError(f"{arg}: --benchmark_repetitions must be a whole number of 1 or more")


def _all_gpus(a, build_dir: Path, only: list[str] | None) -> int:
    from triaudit.fleet import node_run

    gpus = node_run.parse_gpu_list(a.gpus) if a.gpus else None  # SetupError: a TriauditError
    lock = threading.Lock()

    def log(msg: str) -> None:  # the GPU chains report from their threads
        with lock:
            say(msg)

    s = node_run.Setup(
        build_dir, a.results, a.profile, only, list(a.extra or []), gpus, a.timeout_s, a.budget_s, a.bind_numa
    )
    out = node_run.run_all_gpus(s, log)
    say(out.message)
    _add_to_store(a.results, out.run_dir)
    return out.exit_code
