"""What the nccl-tests table and JSON readers share: case names, type names, version codes, the
judgement of a #wrong/error cell, the rows printed as 0.00 GB/s, and the run's rank facts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from triaudit import corners as registry
from triaudit.peers.model import PeerCase, PeerRun, gpu_name_of

TOOL = "nccl-tests"

# nccl-tests type names -> triaudit's (others keep their own name).
TYPES = {
    "float": "fp32",
    "half": "fp16",
    "bfloat16": "bf16",
    "double": "fp64",
    "f8e4m3": "fp8e4m3",
    "f8e5m2": "fp8e5m2",
    "float32": "fp32",
    "float16": "fp16",
    "float64": "fp64",
}
TYPE_BYTES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "fp8e4m3": 1, "fp8e5m2": 1}
TYPE_BYTES.update({"fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8})
# Old nccl-tests printed the largest deviation ("error"), failing a row above these (deltaMaxValue).
OLD_ERROR_TOLERANCE = {"fp16": 5e-2, "bf16": 1e-2, "fp32": 1e-5, "fp64": 1e-12}


@dataclass
class Rank:
    host: str
    bus: str
    gpu: str


def nccl_code_to_version(code: int) -> str:
    """ncclGetVersion's integer: major*10000 + minor*100 + patch from 2.9, major*1000 + ... before."""
    if code >= 20900:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def collective_name(program: str) -> str:
    """all_reduce_perf -> allreduce: the corner that measures it (corners/: each collective names what
    nccl-tests calls it); a collective triaudit has no corner for by nccl-tests' name without "_"."""
    stem = Path(program.strip()).name
    stem = re.sub(r"_perf(_mpi)?$", "", stem)
    return corner_of(stem) or stem.replace("_", "")


def corner_of(collective: str) -> str:
    """The corner a collective of nccl-tests' (all_gather, reducescatter, ...) lands under; "" when
    triaudit has none for it."""
    bare = collective.replace("_", "")
    for c in registry.CORNERS:
        for peer in c.peers:
            if peer.tool == TOOL and any(n.replace("_", "") == bare for n in peer.names):
                return c.name
    return ""


def algo_arg(value: str | None) -> str:
    if not value:
        return "auto"
    return re.sub(r"[^a-z0-9^,_]+", "_", value.strip().lower()) or "auto"


def case_name(collective: str, placement: str, ntype: str, redop: str, root: int | None, algo: str, size: int) -> str:
    """A collective without a reduction prints redop `none` (or nothing): no redop argument then."""
    typ = TYPES.get(ntype, ntype)
    parts = [corner_of(collective) or collective, placement, typ]
    if redop and redop not in ("sum", "none"):
        parts.append(f"redop:{redop}")
    parts.append(f"algo:{algo}")
    if root is not None and root >= 0:  # after the algorithm, as triaudit's own rooted cases
        parts.append(f"root:{root}")
    parts.append(f"bytes:{size}")
    return "/".join(parts)


def placement(group: str, graph: int) -> str:
    base = "out_of_place" if group == "out-of-place" else "in_place"
    if graph:
        return "graph" if base == "out_of_place" else "graph_in_place"
    return base


def wrong_to_error(kind: str, value: str, typ: str) -> str:
    """The error message a #wrong/error cell makes, or "" when the row is right (or unchecked)."""
    if value.upper() == "N/A":
        return ""
    v = float(value)
    if kind == "#wrong":
        return "" if v == 0 else f"nccl-tests found {v:g} wrong elements (#wrong): not a number"
    tol = OLD_ERROR_TOLERANCE.get(TYPES.get(typ, typ), 0.0)
    return "" if v <= tol else f"nccl-tests' largest deviation {v:g} exceeds its tolerance {tol:g} (error column)"


def algbw_from_time(counters: dict, size: int, time_s: float | None, run: PeerRun, derived: list[dict]) -> None:
    """An algbw printed as 0.00 (two decimals in GB/s) becomes nccl-tests' own algbw, size / time,
    from the printed time: a zero is no link's bandwidth. Counted in the context."""
    if counters.get("algbw") != 0 or time_s is None or not time_s > 0:
        return
    counters["algbw"] = size / time_s
    derived.append(counters)
    run.context["algbw_from_time_rows"] = str(int(run.context.get("algbw_from_time_rows", "0")) + 1)
    run.context["algbw_from_time"] = (
        "rows whose algbw was written as 0 (below 0.005 GB/s): algbw = size / time there, as nccl-tests computes "
        "it, and busbw = algbw x the table's own busbw / algbw"
    )


def busbw_of_rounded_rows(derived: list[dict], cases: list[PeerCase]) -> None:
    """busbw of the rows whose algbw and busbw were printed as 0.00: algbw times the table's own
    busbw / algbw (a constant of the collective and the rank count in nccl-tests), read off its
    largest row where both are printed. `cases`: that table's cases only."""
    if not derived:
        return
    whole = [c.counters for c in cases if c.counters.get("algbw", 0) > 0 and c.counters.get("busbw", 0) > 0]
    whole = [c for c in whole if not any(c is d for d in derived)]
    if not whole:
        return
    ratio = whole[-1]["busbw"] / whole[-1]["algbw"]
    for counters in derived:
        if counters.get("busbw") == 0:
            counters["busbw"] = counters["algbw"] * ratio


def rank_count(ranks: dict[int, Rank]) -> int | None:
    """Ranks are numbered 0..n-1 and listed in order, the last just before the table: the highest
    rank listed + 1 is the count even where a paste kept only the last lines of the list."""
    return max(ranks) + 1 if ranks else None


def ranks_to_context(run: PeerRun, ranks: dict[int, Rank]) -> None:
    if not ranks:
        run.not_read.append("the ranks and their GPUs (no '#  Rank ...' lines)")
        run.gpu_name = None
        return
    n = rank_count(ranks)
    run.context["ranks"] = str(n) if n == len(ranks) else f"{n} (the output lists {len(ranks)} of them)"
    run.context["hosts"] = ", ".join(sorted({r.host for r in ranks.values()}))
    run.context["bus_ids"] = ", ".join(f"rank {k}: {r.bus}" for k, r in sorted(ranks.items()))
    run.gpu_name = gpu_name_of([r.gpu for r in ranks.values()], run.not_read, "ranks")


def versions_to_context(run: PeerRun, algo_env: str | None, proto_env: str | None, validation: int | None) -> None:
    if algo_env:
        run.context["nccl_algo"] = f"{algo_env} (NCCL_ALGO set by environment, from NCCL's INFO output)"
    else:
        run.context["nccl_algo"] = "NCCL's own choice (algo:auto): no NCCL_ALGO in the output; assumed unset"
    if proto_env:
        run.context["nccl_proto"] = f"{proto_env} (NCCL_PROTO set by environment)"
    if "nccl_version" not in run.context:
        run.not_read.append("the NCCL version")
    if run.version is None:
        run.not_read.append("the nccl-tests version (older nccl-tests do not print it)")
    run.not_read.append("-a (not printed): the mean over ranks, nccl-tests' default, assumed")
    if validation == 0:
        run.context["validation"] = "off (-c 0): results were not checked"


def single_rank_in_place(run: PeerRun, algbws: list[float]) -> None:
    """In place on one rank NCCL moves nothing (the send buffer already is the result): the time
    is no transfer and its algbw (PB/s in real tables) no bandwidth, so those figures are left out."""
    if algbws:
        run.context["in_place_left_out"] = (
            f"{len(algbws)} in-place figure(s) on one rank, where NCCL moves nothing in place (algbw up to "
            f"{max(algbws) / 1e9:.3g} GB/s): no measurement"
        )
