"""NCCL allreduce (triaudit_allreduce, triaudit_allreduce_mpi): FP32/BF16/FP16, in place, out of
place and captured in a graph; Ring and NCCL's own choice; the GPU-count sweep. busbw = algbw x
2(n-1)/n, as nccl-tests' all_reduce_perf counts it. The bus a data-parallel training step
synchronises its gradients over."""

from __future__ import annotations

from triaudit.corners.base import FULL_WARMUP, QUICK_WARMUP, REPS
from triaudit.corners.collective import collective_corner


def bus_factor(ranks: int) -> float:
    return 2.0 * (ranks - 1) / ranks if ranks > 0 else 0.0


# Nightly: Ring and NCCL's own choice at 8 bytes (latency) and 64 MiB (bandwidth), with the choice
# probe: the collective a training step waits on is watched more closely than the others.
QUICK = (
    "--types=fp32",
    "--modes=out_of_place",
    "--algos=ring,auto",
    "--max-bytes=64MiB",
    "--min-time=0.03",
    QUICK_WARMUP,
    REPS,
    "--benchmark_filter=/bytes:(8|67108864)/",
)

# The full profile: Ring and NCCL's choice, FP32 and BF16, in place and out, at four sizes from
# 8 B to 2 GiB, and the GPU-count sweep.
FULL = (
    "--types=fp32,bf16",
    "--algos=ring,auto",
    "--min-time=0.05",
    FULL_WARMUP,
    "--scaling=on",
    REPS,
    "--benchmark_filter=((out_of_place/fp32|in_place/fp32/algo:auto|out_of_place/bf16/algo:auto)"
    "/.*/bytes:(8|32768|8388608|2147483648)/|scaling/fp32/algo:auto/)",
)

CORNER = collective_corner(
    "allreduce",
    "allreduce",
    60,
    bus_factor,
    ("allreduce", "all_reduce"),
    profiles={"quick": QUICK, "full": FULL, "exhaustive": ("--scaling=on", "--min-time=0.05", REPS)},
    roles=("gradient_sync",),
)
