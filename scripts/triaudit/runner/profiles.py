"""The profiles' arguments for each step of a run (the steps are runner/corners.py's), and finding
the built executables: what `triaudit run` runs, with which flags (read by the runner, the time
model, whole-node runs and Slurm jobs). Standard library only."""

from __future__ import annotations

import os
from pathlib import Path

from triaudit.core.corners import CORNERS, EXECUTABLES, STEP_EXECUTABLE, STEPS  # noqa: F401 (the list this module serves)

COMMON_ARGS = ["--benchmark_out_format=json", "--benchmark_display_aggregates_only=true"]
# Every profile binds each executable to its GPU's NUMA node, CPUs and memory (nvbandwidth does);
# `triaudit run --bind-numa off` opts out. Five repetitions: the fewest with which the Mann-Whitney
# test of `compare` can reach p < 0.05 (with 3 against 3 it never can). Each call warms up for
# 0.2 s (--warmup-s) and times regions for --min-time; `triaudit run --dry-run --card h200` shows
# the estimated time (timemodel.py): quick <= 60 s and full <= 5 min on an H200 are held by a test.
_REPS = "--benchmark_repetitions=5"
# Each case's own work before every call brings the clock back after the host's checks (the GPU
# boosts within milliseconds): 0.1 s nightly, 0.15 s in the full profile, 0.2 s (the executables'
# default) in the exhaustive one.
_QUICK_WARMUP = "--warmup-s=0.1"
_FULL_WARMUP = "--warmup-s=0.15"
PROFILES: dict[str, dict[str, list[str]]] = {
    # Nightly CI: the figures a regression would show in, about a minute on an H200.
    "quick": {
        "triaudit_stream": [
            "--ops=copy,triad",
            "--types=fp32",
            "--min-bytes=4MiB",
            "--min-time=0.03",
            _QUICK_WARMUP,
            "--sustained-s=0.5",
            _REPS,
            "--benchmark_filter=(triad/fp32/cache:cold/bytes:1073741824|triad/fp32/cache:hot/"
            "bytes:4194304|triad_sustained/.*)/",
        ],
        "triaudit_gemm": [
            "--families=square,ceiling",
            "--max-square=8192",
            "--min-time=0.03",
            _QUICK_WARMUP,
            "--sustained-s=0.5",
            _REPS,
            "--benchmark_filter=^gemm/(cublaslt/(bf16|fp8e4m3)/layout:tn/m:8192/|ceiling/bf16/)",
        ],
        "triaudit_gemm_ladder": [
            "--families=ladder",
            "--min-time=0.03",
            _QUICK_WARMUP,
            _REPS,
            "--benchmark_filter=^gemm/ladder_l[35]_[a-z0-9_]+/bf16/layout:tn/m:8192/",
        ],
        "triaudit_memcpy": [
            "--directions=h2d,d2h,d2d,bidir",
            "--max-bytes=256MiB",
            "--min-time=0.03",
            _QUICK_WARMUP,
            _REPS,
            "--benchmark_filter=^memcpy/((h2d|d2h)/pinned/bytes:(4096|268435456)|h2d/pageable/"
            "bytes:268435456|d2d/copy_engine/bytes:268435456|bidir/pinned/bytes:268435456)/",
        ],
        "triaudit_allreduce": [
            "--types=fp32",
            "--modes=out_of_place",
            "--algos=ring,auto",
            "--max-bytes=64MiB",
            "--min-time=0.03",
            _QUICK_WARMUP,
            _REPS,
            "--benchmark_filter=/bytes:(8|67108864)/",
        ],
        "triaudit_p2p": [
            "--tests=ce,latency",
            "--pairs=representative",
            "--min-bytes=512MiB",
            "--min-time=0.03",
            _QUICK_WARMUP,
            _REPS,
            "--benchmark_filter=^p2p/(ce/(uni|bidir)/.*/bytes:536870912|small_copy/ce/.*/bytes:4)/",
        ],
        "triaudit_launch": [
            "--min-time=0.03",
            _QUICK_WARMUP,
            _REPS,
            "--benchmark_filter=^launch/(empty/enqueue|chain_fit|fusion/(fused|unfused)/steps:64/"
            "bytes:65536/|sync/stream_synchronize)",
        ],
    },
    # Evaluation: every corner at the sizes and precisions a comparison table needs, within
    # 5 minutes on an H200. Sustained figures: 2 s per repetition, 10 s of load back to back.
    "full": {
        "triaudit_stream": [
            "--min-bytes=1MiB",
            "--min-time=0.05",
            _FULL_WARMUP,
            "--sustained-s=2",
            _REPS,
            "--benchmark_filter=(fp32/cache:cold/bytes:(1048576|16777216|268435456|1073741824)|"
            "triad/fp64/cache:cold/bytes:(16777216|1073741824)|(copy|triad)/fp32/cache:hot/"
            "bytes:(1048576|4194304)|triad_sustained/.*)/",
        ],
        "triaudit_gemm": [
            "--families=square,llm,misaligned,ceiling",
            "--max-square=8192",
            "--min-time=0.05",
            _FULL_WARMUP,
            "--sustained-s=2",
            _REPS,
            "--benchmark_filter=^gemm/(cublaslt/[a-z0-9]+/layout:tn/m:8192/|cublaslt/(bf16|tf32|fp64)/"
            "layout:nn/m:8192/|cublaslt/bf16/llm:[a-z0-9_-]+/tokens:(1|4096)/|"
            "cublaslt/fp8e4m3/llm:llama2-70b[a-z_-]+/tokens:(1|4096)/|cublaslt/bf16/layout:nn/m:8193/|"
            "ceiling/(fp64|tf32|fp16|bf16|fp8e4m3|int8)/burst|ceiling/(bf16|fp8e4m3)/sustained)",
        ],
        "triaudit_gemm_ladder": [
            "--families=ladder",
            "--min-time=0.05",
            _FULL_WARMUP,
            _REPS,
            "--benchmark_filter=^gemm/(ladder_l[01]_[a-z0-9_]+/fp32/layout:tn/m:1024/|"
            "ladder_l[2-5]_[a-z0-9_]+/bf16/layout:tn/m:8192/)",
        ],
        "triaudit_memcpy": [
            "--min-time=0.05",
            _FULL_WARMUP,
            _REPS,
            "--benchmark_filter=(/bytes:(4096|268435456)/|pinned/bytes:1073741824/|^memcpy/overlap/)",
        ],
        "triaudit_allreduce": [
            "--types=fp32,bf16",
            "--algos=ring,auto",
            "--min-time=0.05",
            _FULL_WARMUP,
            "--scaling=on",
            _REPS,
            "--benchmark_filter=((out_of_place/fp32|in_place/fp32/algo:auto|out_of_place/bf16/algo:auto)"
            "/.*/bytes:(8|32768|8388608|2147483648)/|scaling/fp32/algo:auto/)",
        ],
        "triaudit_p2p": [
            "--tests=ce,sm_write,latency",
            "--min-bytes=8MiB",
            "--min-time=0.05",
            _FULL_WARMUP,
            _REPS,
            "--benchmark_filter=^p2p/((ce|sm_write)/(uni|bidir)/.*/bytes:(8388608|536870912)|small_copy/ce/.*/bytes:4)/",
        ],
        "triaudit_launch": [
            "--min-time=0.05",
            _FULL_WARMUP,
            _REPS,
            "--benchmark_filter=^launch/(empty|chain/(eager|graph)/kernels:(1|1000)/|chain_fit|fusion|sync)",
        ],
    },
    # Every case of every executable, five repetitions: for a machine with time to spare
    # (`triaudit run --dry-run --profile exhaustive --card ...` says how long).
    "exhaustive": {
        "triaudit_stream": ["--min-time=0.05", _REPS],
        "triaudit_gemm": ["--families=square,llm,misaligned,ceiling", "--min-time=0.05", _REPS],
        "triaudit_gemm_ladder": ["--families=ladder", "--min-time=0.05", _REPS],
        "triaudit_memcpy": ["--min-time=0.05", "--step=2", _REPS],
        "triaudit_allreduce": ["--scaling=on", "--min-time=0.05", _REPS],
        "triaudit_p2p": ["--staged=on", "--min-time=0.05", _REPS],
        "triaudit_launch": ["--min-time=0.05", _REPS],
    },
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
