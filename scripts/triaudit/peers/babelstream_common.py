"""What BabelStream's text and CSV readers share: its kernels and their byte weights, units, the
device line each programming model prints, the validation lines, and one kernel row as a case."""

from __future__ import annotations

import math
import re

from triaudit.peers.model import PeerCase, PeerRun

TOOL = "babelstream"

OPS = {
    "Copy": ("copy", 2),
    "Mul": ("scale", 2),
    "Add": ("add", 3),
    "Triad": ("triad", 3),
    "Dot": ("dot", 2),
    "Nstream": ("nstream", 4),
}
TYPES = {"float": "fp32", "double": "fp64", 4: "fp32", 8: "fp64"}
UNITS = {
    "mbytes": 1e6,
    "mb": 1e6,
    "mibytes": 2.0**20,
    "mib": 2.0**20,
    "gbytes": 1e9,
    "gb": 1e9,
    "gibytes": 2.0**30,
    "gib": 2.0**30,
    "tb": 1e12,
    "tib": 2.0**40,
}

# "Using <model> device[:] <name>" (CUDA, HIP, OpenCL, SYCL, alpaka, Kokkos, Thrust's "device: ..."). The
# host models (OpenMP on a CPU, TBB, std-*) print no device line; TBB's "Using TBB partitioner" is none.
DEVICE = re.compile(r"^Using\s+(?:(\S+(?:\s+\S+)?)\s+)?device:?\s+(.+?)\s*$")


def unit_factor(text: str) -> float | None:
    t = text.strip().lower().replace("/sec", "").replace("/s", "").replace("_per_sec", "")
    t = t.removeprefix("max_")
    return UNITS.get(t)


def validation_errors(lines: list[str]) -> dict[str, str]:
    """kernel label (or "*" for all) -> message, from BabelStream's validation lines."""
    out: dict[str, str] = {}
    for s in (x.strip() for x in lines):
        if s.startswith("Validation failed on sum") or s.startswith("FAILED validation of sum"):
            out["Dot"] = s
        elif s.startswith("Validation failed on") or s.startswith("FAILED validation of"):
            out.setdefault("*", s)
    return out


def add_case(run, label, typ, size_arg, bps, tmin, tmax, tavg, array_bytes, errors, num_times, exact_time):
    op, arrays = OPS[label]
    err = errors.get(label) or errors.get("*", "")
    if err:
        err = f"BabelStream's validation failed: {err}"
    elif not (math.isfinite(bps) and bps > 0):
        err = f"BabelStream printed a bandwidth of {bps:g} for {label}: not a number"
    elif array_bytes and tmin > 0 and (exact_time or tmin >= 1e-4):
        # The printed bandwidth must be the STREAM bytes over the minimum time (a development version
        # of BabelStream swapped the Add and Mul weights): refuse a figure that is not.
        implied = bps * tmin / array_bytes
        if abs(implied - arrays) > (0.02 if exact_time else 0.25) * arrays:
            err = (
                f"BabelStream's {label} bandwidth implies {implied:.2f} arrays moved per element, not "
                f"{arrays}: its byte weights are wrong in this version; not a number"
            )
    name = f"stream/{op}/{typ}/cache:hot/{size_arg}".rstrip("/")
    counters = {} if err else {"bytes_per_second": bps, "time_min_s": tmin, "time_max_s": tmax, "time_mean_s": tavg}
    run.cases.append(
        PeerCase(
            name=name,
            counters=counters,
            time_s=None if err else tmin,
            error=err,
            iterations=num_times,
            label="time is the fastest run; bandwidth from it",
        )
    )


def common(run: PeerRun) -> None:
    if run.gpu_name is None:
        impl = run.context.get("implementation")
        run.not_read.append(
            f"the device name ({impl} prints no 'Using ... device' line)"
            if impl
            else "the device name (no 'Using ... device' line)"
        )
    if run.version is None:
        run.not_read.append("the BabelStream version (no 'Version:' line; --csv prints none)")
    run.context["cache"] = (
        "hot: BabelStream does not flush the L2 between kernels (compare with triaudit's "
        "cold only where the arrays are several times the L2)"
    )
    if run.context.get("memory", "DEFAULT") != "DEFAULT":
        run.context["memory_note"] = f"Memory: {run.context['memory']}, not device memory: not comparable"
