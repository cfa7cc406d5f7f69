"""Which collective an nccl-tests table is, where the output does not name its program.

Read off what nccl-tests prints (src/*.cu GetCollByteCount / GetBw, common.cu's header):
- old releases (the `error` column) print `redop` only for tests with a reduction and `root` only
  for rooted ones: all_gather neither, broadcast `root`, reduce both, all_reduce and reduce_scatter
  `redop`, alltoall a `redop` column left blank;
- newer ones print both for every test: `none` for no reduction, `-1` for no root;
- `count` is the whole buffer (all_reduce, broadcast, reduce, sendrecv) or one rank's share
  (all_gather, reduce_scatter, alltoall, gather, scatter: size = count x type size x ranks);
- busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n (the per-rank ones), 1 (broadcast, reduce, sendrecv).
Where several collectives fit, the name says so (`allgather_or_alltoall`), except that
all_reduce_perf, the usual one, is taken where it fits (the context names the others).
"""

from __future__ import annotations

from dataclasses import dataclass

from triaudit.peers.nccl_common import TYPE_BYTES, TYPES

# name: (reduces, rooted, count is one rank's share, busbw/algbw as a function of the rank count)
SPECS = {
    "allreduce": (True, False, False, lambda n: 2 * (n - 1) / n),
    "reducescatter": (True, False, True, lambda n: (n - 1) / n),
    "allgather": (False, False, True, lambda n: (n - 1) / n),
    "alltoall": (False, False, True, lambda n: (n - 1) / n),
    "broadcast": (False, True, False, lambda n: 1.0),
    "reduce": (True, True, False, lambda n: 1.0),
    "sendrecv": (True, False, False, lambda n: 1.0),  # prints redop `sum`, its default op
    "gather": (False, True, True, lambda n: (n - 1) / n),
    "scatter": (False, True, True, lambda n: (n - 1) / n),
}
# Old column sets (the `error` column era): (has redop, has root) -> the tests that printed it.
OLD = {
    (False, False): ["allgather"],
    (False, True): ["broadcast"],
    (True, True): ["reduce"],
    (True, False): ["allreduce", "reducescatter", "alltoall"],
}
TOLERANCE = 0.02  # GB/s are printed with two decimals; the ratio is read off a row above 0.5 GB/s


@dataclass
class Facts:
    """What one table shows: its header's columns, one row's values, its largest row's bandwidths."""

    has_redop: bool
    has_root: bool
    old: bool  # the `error` column, or a header without redop/root
    redop: str  # "" where the column is blank (old alltoall)
    root: int | None
    size: int
    count: int
    ntype: str
    ratio: float | None  # busbw / algbw of the largest row, where both are printed
    ranks: int | None


def _factor_fits(spec, ratio: float | None, n: int | None) -> bool:
    if ratio is None:
        return True
    f = spec[3]
    if n:
        return abs(f(n) - ratio) <= TOLERANCE * max(f(n), 0.05) + 1e-9
    # Rank count unknown: some n >= 1 must give this ratio.
    top = f(10**9)
    return abs(ratio - 1.0) <= TOLERANCE if top == 1.0 else -1e-9 <= ratio <= top + TOLERANCE


def candidates(f: Facts) -> tuple[list[str], int | None]:
    """-> (the collectives this table can be, the rank count it implies)."""
    per_rank = None
    n = f.ranks
    ts = TYPE_BYTES.get(TYPES.get(f.ntype, f.ntype))
    if ts and f.count:
        r = f.size / (f.count * ts)
        if abs(r - 1) < 1e-6:
            per_rank = False if n != 1 else None  # one rank: both readings give size = count x type size
        elif r > 1.5 and abs(r - round(r)) < 1e-6:
            per_rank, n = True, n or round(r)
    names = OLD[(f.has_redop, f.has_root)] if f.old else list(SPECS)
    out = []
    for name in names:
        reduces, rooted, share, _ = SPECS[name]
        if f.old:
            if (name == "alltoall") != (f.redop == ""):
                continue  # old alltoall printed the redop column blank; the others filled it
        elif reduces != (f.redop not in ("", "none")) or rooted != (f.root is not None and f.root >= 0):
            continue
        if per_rank is not None and share != per_rank:
            continue
        if not f.old and not _factor_fits(SPECS[name], f.ratio, n):
            continue
        out.append(name)
    return out, n


def name_from_shape(f: Facts) -> tuple[str, str]:
    """-> (collective name, how it was found) for a table whose program is not named."""
    fits, n = candidates(f)
    redop = (f.redop or "blank") if f.has_redop else "no column"
    shape = f"the table's shape: redop {redop}, root " + ("no column" if not f.has_root else str(f.root))
    if n:
        shape += f", {n} rank(s)"
    if f.ratio is not None:
        shape += f", busbw/algbw {f.ratio:.3f}"
    if len(fits) == 1:
        return fits[0], f"from {shape}"
    if "allreduce" in fits:
        others = ", ".join(x for x in fits if x != "allreduce")
        return "allreduce", f"all_reduce_perf assumed: the output does not name its program; {shape} also fits {others}"
    if fits:
        return "_or_".join(fits), f"one of {', '.join(fits)}: the output does not name its program; {shape} fits each"
    return "unknown_collective", f"no nccl-tests collective has {shape}, and the output does not name its program"
