"""The time model's shared parts: the settings a profile gives a case, the loop every case runs
(benchmarks/common/measure.hpp) and the fixed costs around it. Each corner's module models its own
cases with these (`triaudit run --dry-run`, runner/timemodel.py):

    executable = startup + sum over its cases of  repetitions x call  (+ the case's first-call setup)
    call       = warm-up (--warmup-s, at least one region) + timed regions (--min-time of wall time,
                 at least one region) + the corner's per-call work (verification, a second loop)
    region     = operations per region x one operation's time (+ an L2 or host-cache flush)

One operation's time comes from the card's datasheet rates (core/specs.py) at an efficiency a tuned
kernel reaches: an estimate for planning a run and for holding the profiles to their goals, never a
measurement. Deliberately on the slow side: the estimate bounds a run. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

GEMM_EFFICIENCY = 0.7
HBM_EFFICIENCY = 0.9
L2_SPEEDUP = 2.5  # hot STREAM from L2, relative to HBM
PCIE_EFFICIENCY = 0.8
PAGEABLE_FRACTION = 0.5  # pageable copies against pinned
HOST_FLUSH_BYTES = 256 << 20
HOST_MEMSET_BPS = 10e9  # writing the 256 MiB host-cache flush buffer
HOST_CHECK_PER_S = 0.5e9  # elements (words) the host checks or generates per second
KERNEL_LAUNCH_S = 4e-6  # an empty kernel's launch, host side
SYNC_S = 10e-6  # a synchronize round trip
REGION_OVERHEAD_S = 30e-6  # hold kernel, events, synchronize per region
CALL_OVERHEAD_S = 0.02  # Google Benchmark, buffers kept across calls, stream creation
EXE_STARTUP_S = 1.0  # process, CUDA context, NVML, catalogue

MIN_REGION_S = 5e-4  # region_plan.hpp / gemm_catalogue.hpp: every timed region holds >= 0.5 ms of device time
LATCH_OPS = 126  # latch_budget.hpp kLatchEntriesForOps: queue entries one held region's operations may use
WRITEBACK_RESIDUAL = 0.005  # region_plan.hpp kMaxWritebackResidual


def ops_for_region_time(op_s: float, min_ops: int, max_ops: int) -> int:
    """region_plan.hpp ops_for_region_time: >= 0.5 ms of device time, min_ops to max_ops."""
    import math

    return max(min_ops, min(max(min_ops, max_ops), math.ceil(MIN_REGION_S / op_s) if op_s > 0 else min_ops))


def cold_layout(l2: float, written: float, traffic: float, flush: bool, max_ops: int) -> tuple[int, int]:
    """region_plan.hpp: (buffer sets a cold region rotates through, its fewest operations for a
    write-back residual of at most 0.5 % where the traffic exceeds the L2)."""
    import math

    sets = 1 if traffic >= 3 * l2 else math.ceil(3 * l2 / traffic) + 1
    ops = 1
    if flush and traffic > l2:
        ops = min(max_ops, max(1, math.ceil(l2 * written / traffic / traffic / WRITEBACK_RESIDUAL)))
    return sets, ops


DEFAULTS = {"min_time": 0.05, "warmup": 0.2, "sustained": 10.0, "repetitions": 1, "max_op": 1.0}


@dataclass
class Settings:
    min_time: float
    warmup: float
    sustained: float
    repetitions: int
    max_op: float = DEFAULTS["max_op"]  # triaudit_gemm --max-op-seconds: longer GEMMs are skipped
    pairs: str = "all"  # triaudit_p2p --pairs: all, or representative (one ordered pair per link type)


def settings_from_args(args: list[str]) -> Settings:
    def value(flag: str, default: float) -> float:
        for a in args:
            if a.startswith(flag + "="):
                return float(a.split("=", 1)[1])
        return default

    return Settings(
        value("--min-time", DEFAULTS["min_time"]),
        value("--warmup-s", DEFAULTS["warmup"]),
        value("--sustained-s", DEFAULTS["sustained"]),
        int(value("--benchmark_repetitions", 1)),
        value("--max-op-seconds", DEFAULTS["max_op"]),
        next((a.split("=", 1)[1] for a in args if a.startswith("--pairs=")), "all"),
    )


def name_args(name: str) -> dict[str, str]:
    """The `key:value` parts of a case name."""
    return dict(p.split(":", 1) for p in name.split("/") if ":" in p)


def loop(s: Settings, region: float, extra_per_call: float = 0.0, loops: int = 1) -> float:
    """One call: warm-up and timed regions (each at least one region), `loops` times over."""
    region = region + REGION_OVERHEAD_S
    one = max(s.warmup, region) + max(s.min_time, region)
    return CALL_OVERHEAD_S + loops * one + extra_per_call


def unmodelled(s: Settings) -> float:
    """A case no model knows: one millisecond regions."""
    return s.repetitions * loop(s, 1e-3)
