"""The corners triaudit measures, one entry each: its executable, the run steps that execute it (in
the order a run takes them), the function of runner/timemodel.py that estimates its cases, and
its report section (a module of report/sections/). The runner, the time model, doctor and the
Slurm job read this list; the profiles' arguments per step are runner/profiles.py's.
Standard library only: it sits at the bottom of the package, below every wing that reads it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Corner:
    name: str  # the first part of its cases' names: stream/..., gemm/...
    executable: str
    steps: tuple[str, ...]  # the run steps that execute it; a step's results are <step>.json
    time_model: str  # the function of runner/timemodel.py that estimates one of its cases
    report_section: str  # the module of report/sections/ that shows it
    per_gpu: bool = True  # measured on each GPU (False: once over all of a node's GPUs)


CORNERS: tuple[Corner, ...] = (
    Corner("stream", "triaudit_stream", ("triaudit_stream",), "stream_case", "stream"),
    # The hand-written ladder is a step of its own, run last: the wgmma levels are the likeliest
    # to hang, and a hang then costs no other corner.
    Corner("gemm", "triaudit_gemm", ("triaudit_gemm", "triaudit_gemm_ladder"), "gemm_case", "gemm"),
    Corner("memcpy", "triaudit_memcpy", ("triaudit_memcpy",), "memcpy_case", "memcpy"),
    Corner("allreduce", "triaudit_allreduce", ("triaudit_allreduce",), "allreduce_case", "allreduce", False),
    Corner("p2p", "triaudit_p2p", ("triaudit_p2p",), "p2p_case", "p2p", False),
    Corner("launch", "triaudit_launch", ("triaudit_launch",), "launch_case", "launch"),
)

EXECUTABLES = [c.executable for c in CORNERS]
# A run's steps in order: each corner's first step in the list's order, then the later ones.
STEPS: list[tuple[str, str]] = [(c.steps[0], c.executable) for c in CORNERS] + [
    (s, c.executable) for c in CORNERS for s in c.steps[1:]
]
STEP_EXECUTABLE = dict(STEPS)


def corner_named(name: str) -> Corner | None:
    return next((c for c in CORNERS if c.name == name), None)
