"""NCCL all-to-all (triaudit_alltoall, triaudit_alltoall_mpi): every rank sends a distinct share to
every rank; out of place and captured in a graph (NCCL has no in-place all-to-all); NCCL's own way
only (point-to-point: NCCL_ALGO does not apply). busbw = algbw x (n-1)/n, as nccl-tests' alltoall_perf."""

from __future__ import annotations

from triaudit.corners.collective import collective_corner


def bus_factor(ranks: int) -> float:
    return (ranks - 1) / ranks if ranks > 0 else 0.0


CORNER = collective_corner("alltoall", "all-to-all", 63, bus_factor, ("alltoall",))
