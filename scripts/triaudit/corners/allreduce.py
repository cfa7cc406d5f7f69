"""NCCL allreduce (triaudit_allreduce, triaudit_allreduce_mpi): FP32/BF16/FP16, in place, out of
place and captured in a graph; Ring and NCCL's own choice; the GPU-count sweep. busbw = algbw x
2(n-1)/n, as nccl-tests' all_reduce_perf counts it. The bus a data-parallel training step
synchronises its gradients over."""

from __future__ import annotations

from triaudit.corners.collective import collective_corner


def bus_factor(ranks: int) -> float:
    return 2.0 * (ranks - 1) / ranks if ranks > 0 else 0.0


CORNER = collective_corner(
    "allreduce", "allreduce", 60, bus_factor, ("allreduce", "all_reduce"), roles=("gradient_sync",)
)
