"""NCCL reduce-scatter (triaudit_reduce_scatter, triaudit_reduce_scatter_mpi): the sum over ranks,
each rank keeping its share; FP32, BF16, FP16; out of place, in place, graph; Ring, NVLS and NCCL's
own choice. The message size N is the send buffer (nccl-tests' reduce_scatter_perf size); busbw =
algbw x (n-1)/n."""

from __future__ import annotations

from triaudit.corners.collective import collective_corner


def bus_factor(ranks: int) -> float:
    return (ranks - 1) / ranks if ranks > 0 else 0.0


CORNER = collective_corner("reduce_scatter", "reduce-scatter", 62, bus_factor, ("reduce_scatter", "reducescatter"))
