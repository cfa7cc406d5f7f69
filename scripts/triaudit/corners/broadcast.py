"""NCCL broadcast (triaudit_broadcast, triaudit_broadcast_mpi): the root's buffer to every rank, from
--root (root:<r> in the names, after the algorithm); out of place, in place, graph; Ring and NCCL's
own choice. busbw = algbw, as nccl-tests' broadcast_perf counts it."""

from __future__ import annotations

from triaudit.corners.collective import collective_corner


def bus_factor(ranks: int) -> float:
    return 1.0 if ranks > 0 else 0.0


CORNER = collective_corner("broadcast", "broadcast", 64, bus_factor, ("broadcast",))
