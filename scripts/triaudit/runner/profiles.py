"""The profiles' arguments for each step of a run (each corner declares its steps' arguments in its
module of corners/), and finding the built executables: what `triaudit run` runs, with which flags
(read by the runner, the time model, whole-node runs and Slurm jobs). Standard library only."""

from __future__ import annotations

import os
from pathlib import Path

from triaudit.corners import EXECUTABLES, RUN_CORNERS, STEP_EXECUTABLE, STEPS
from triaudit.corners.base import PROFILE_NAMES

COMMON_ARGS = ["--benchmark_out_format=json", "--benchmark_display_aggregates_only=true"]
# Each profile's arguments per step, as the corners declare them (corners/<name>.py): quick is
# nightly CI (the figures a regression would show in, about a minute on an H200), full an evaluation
# (every corner at the sizes and precisions a comparison table needs, within 5 minutes on an H200),
# exhaustive every case of every executable. Every profile binds each executable to its GPU's NUMA
# node, CPUs and memory (nvbandwidth does); `triaudit run --bind-numa off` opts out.
PROFILES: dict[str, dict[str, list[str]]] = {
    profile: {s.name: list(s.profiles.get(profile, ())) for c in RUN_CORNERS for s in c.steps}
    for profile in PROFILE_NAMES
}


def profile_args(profile: str, step: str) -> list[str]:
    """The arguments a profile gives one step (after COMMON_ARGS)."""
    return COMMON_ARGS + PROFILES[profile].get(step, [])


def find_executables(build_dir: Path, only: list[str] | None = None) -> dict[str, Path]:
    """Each built executable (EXECUTABLES) by name; `only` as for find_steps."""
    found = {}
    for name in EXECUTABLES:
        if only and not any(_step_selected(step, only) for step, exe in STEPS if exe == name):
            continue
        hits = [p for p in build_dir.rglob(name) if p.is_file() and os.access(p, os.X_OK)]
        if hits:
            found[name] = sorted(hits)[0]
    return found


def _step_selected(step: str, only: list[str]) -> bool:
    short, exe_short = step.removeprefix("triaudit_"), STEP_EXECUTABLE[step].removeprefix("triaudit_")
    return any(x.removeprefix("triaudit_") in (short, exe_short) for x in only)


def find_steps(build_dir: Path, only: list[str] | None = None) -> dict[str, Path]:
    """The steps of a run whose executable is built, in STEPS order: step name -> executable.
    `only` names executables (gemm: both GEMM steps) or steps (gemm_ladder)."""
    exes = find_executables(build_dir, only)
    return {step: exes[exe] for step, exe in STEPS if exe in exes and (not only or _step_selected(step, only))}


# What `run` decides for every executable itself: where the result file goes and in which format
# (it reads them back), and never overwriting one. Given after `--`, the executable would take the
# user's flag over run's own: its measurements in a file run never reads, or a file overwritten.
RUN_OWNS = ("--benchmark_out", "--benchmark_out_format", "--force")


def check_extra(extra: list[str] | None) -> str:
    """ "" when the arguments after `--` leave run's own flags alone; otherwise what is wrong."""
    taken = [x for x in extra or [] if x.split("=", 1)[0] in RUN_OWNS]
    if taken:
        return (
            f"{', '.join(taken)}: `triaudit run` writes each executable's result file itself (under "
            "--results, never over an existing one); run an executable directly to choose its file"
        )
    return ""


def check_only(only: list[str] | None) -> str:
    """ "" when every name given to --only is an executable or a step; otherwise what is wrong."""
    known = {n.removeprefix("triaudit_") for n in EXECUTABLES} | {s.removeprefix("triaudit_") for s, _ in STEPS}
    unknown = [x for x in only or [] if x.removeprefix("triaudit_") not in known]
    if unknown:
        return f"--only: unknown executable(s) {', '.join(unknown)}; choose from {', '.join(sorted(known))}"
    return ""
