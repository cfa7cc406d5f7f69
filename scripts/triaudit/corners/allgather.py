"""NCCL allgather (triaudit_allgather, triaudit_allgather_mpi): every rank's share gathered to every
rank, out of place, in place and captured in a graph; Ring, NVLS and NCCL's own choice. The message
size N is the receive buffer (nccl-tests' all_gather_perf size); busbw = algbw x (n-1)/n."""

from __future__ import annotations

from triaudit.corners.collective import collective_corner


def bus_factor(ranks: int) -> float:
    return (ranks - 1) / ranks if ranks > 0 else 0.0


CORNER = collective_corner(
    "allgather",
    "allgather",
    61,
    bus_factor,
    ("allgather", "all_gather"),
)
