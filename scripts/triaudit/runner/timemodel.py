"""How long a profile takes on a card, before it runs: `triaudit run --dry-run`.

The model follows what each case does (benchmarks/common/measure.hpp and the corners):

    executable = startup + sum over its cases of  repetitions x call  (+ the case's first-call setup)
    call       = warm-up (--warmup-s, at least one region) + timed regions (--min-time of wall time,
                 at least one region) + the corner's per-call work (verification, a second loop)
    region     = operations per region x one operation's time (+ an L2 or host-cache flush)

Google Benchmark calls each case once per repetition (the suite makes it accept the first call).
One operation's time comes from the card's datasheet rates (specs.py) at an efficiency a tuned
kernel reaches (GEMM 70 % of the dense peak, STREAM 90 % of HBM, copies 80 % of the PCIe link):
an estimate for planning a run and for holding the profiles to their goals, never a measurement.
Standard library only: `run` imports it on a bare GPU machine.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.core import specs
from triaudit.core.corners import corner_named
from triaudit.core.errors import TriauditError
from triaudit.runner import profiles

# Efficiencies and fixed costs (seconds). Deliberately on the slow side: the estimate bounds a run.
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
NCCL_INIT_S = 1.5  # one set of communicators
NCCL_LATENCY_S = 15e-6  # one small allreduce

# The GEMM selection and checks (benchmarks/gemm): candidates the heuristic offers, the timed
# seconds each gets, and the fixed cost of one checked launch (the copies back, the host's loop).
AUTOTUNE_CANDIDATES = 8
AUTOTUNE_MIN_S = 0.02
VERIFY_FIXED_S = 0.003
MIN_REGION_S = 5e-4  # gemm_catalogue.hpp kMinRegionSeconds
# Samples per 64 x 64 block of D the check takes (gemm_bound.cpp gemm_block_sampling), the most any
# K up to 16384 needs: enough that a k-tile lost in one CTA is caught with probability 0.99.
VERIFY_SAMPLES_PER_BLOCK = {"fp32": 2, "tf32": 3, "fp16": 2, "fp16acc16": 26, "bf16": 3, "fp8e4m3": 3, "fp8e4m3fast": 8}


def gemms_per_region(seconds_per_gemm: float) -> int:
    """gemm_catalogue.cpp gemms_per_region: >= 0.5 ms of GEMMs per region, 1 to 31."""
    import math

    if not seconds_per_gemm > 0:
        return 1
    return int(min(31, max(1, math.ceil(MIN_REGION_S / seconds_per_gemm))))


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

# The LLM layers of triaudit_gemm (gemm_catalogue.cpp llm_shapes): (in_features, out_features).
LLM_LAYERS = {
    "llama2-7b-qkv": (4096, 12288),
    "llama2-7b-attn_out": (4096, 4096),
    "llama2-7b-mlp_up": (4096, 11008),
    "llama2-7b-mlp_down": (11008, 4096),
    "llama2-70b-qkv": (8192, 10240),
    "llama2-70b-attn_out": (8192, 8192),
    "llama2-70b-mlp_up": (8192, 28672),
    "llama2-70b-mlp_down": (28672, 8192),
}
CEILING_SHAPES = [(m, n, k) for m in (4096, 8192, 16384) for n in (4096, 8192) for k in (4096, 8192)]
PRECISION_RATE = {**specs.PRECISION_RATES, "": ()}
PRECISION_BYTES = {
    "fp64": (8, 8),
    "fp32": (4, 4),
    "tf32": (4, 4),
    "fp16": (2, 2),
    "fp16acc16": (2, 2),
    "bf16": (2, 2),
    "fp8e4m3": (1, 2),
    "fp8e4m3fast": (1, 2),
    "int8": (1, 4),
}
# Ladder levels' speed relative to cuBLASLt (planning figures; level 0-1 run on CUDA cores).
LADDER_SLOWDOWN = {0: 200.0, 1: 30.0, 2: 6.0, 3: 2.0, 4: 1.6, 5: 1.3}


@dataclass
class Settings:
    min_time: float
    warmup: float
    sustained: float
    repetitions: int
    max_op: float = DEFAULTS["max_op"]  # triaudit_gemm --max-op-seconds: longer GEMMs are skipped
    pairs: str = "all"  # triaudit_p2p --pairs: all, or representative (one ordered pair per link type)


@dataclass
class CaseEstimate:
    name: str
    seconds: float  # all repetitions and the first call's setup
    note: str = ""


@dataclass
class ExeEstimate:
    executable: str
    startup: float
    cases: list[CaseEstimate] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return self.startup + sum(c.seconds for c in self.cases)


class ModelError(TriauditError):
    pass


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


def _args(name: str) -> dict[str, str]:
    return dict(p.split(":", 1) for p in name.split("/") if ":" in p)


def _loop(s: Settings, region: float, extra_per_call: float = 0.0, loops: int = 1) -> float:
    """One call: warm-up and timed regions (each at least one region), `loops` times over."""
    region = region + REGION_OVERHEAD_S
    one = max(s.warmup, region) + max(s.min_time, region)
    return CALL_OVERHEAD_S + loops * one + extra_per_call


def _gemm_rate(card: specs.CardSpec, precision: str) -> float | None:
    for key in PRECISION_RATE.get(precision, ()):
        rate = card.peak_flops(key)
        if rate:
            return rate * GEMM_EFFICIENCY
    return None


def _gemm_shape(name: str) -> tuple[int, int, int]:
    a = _args(name)
    if "llm" in a:
        fin, fout = LLM_LAYERS.get(a["llm"], (8192, 8192))
        return fout, int(a["tokens"]), fin
    return int(a.get("m", 0)), int(a.get("n", 0)), int(a.get("k", 0))


def stream_case(name: str, card: specs.CardSpec, s: Settings) -> float:
    parts = name.split("/")
    op, a = parts[1], _args(name)
    size = int(a["bytes"])
    arrays = 3 if op.startswith(("add", "triad")) else 2
    hbm = card.mem_bw * HBM_EFFICIENCY
    l2 = card.l2_mb * 1e6
    moved = arrays * size
    cold = a.get("cache") == "cold"
    bw = hbm if cold or moved > l2 / 2 else hbm * L2_SPEEDUP
    op_s = moved / bw + KERNEL_LAUNCH_S
    max_ops = LATCH_OPS // (2 if op == "dot" else 1)
    sustained = op.endswith("_sustained")
    flush = cold and not (sustained and moved >= 3 * l2)
    sets, min_ops = cold_layout(l2, 0 if op == "dot" else size, moved, flush, max_ops) if cold else (1, 1)
    ops = ops_for_region_time(op_s, min_ops, max_ops)
    region = ops * op_s + (3 * l2 / hbm if flush else 0.0)
    setup = 0.0
    # Every call fills a, b, c and poisons the output of every set (4 arrays written), times one
    # region of the fewest operations to size the others, then checks every output element on the
    # device (one read): nothing of the arrays crosses to the host.
    verify = sets * (5 * size / hbm + 5 * KERNEL_LAUNCH_S) + min_ops * op_s + REGION_OVERHEAD_S
    if sustained:
        return setup + s.repetitions * (CALL_OVERHEAD_S + max(s.warmup, region) + s.sustained + verify)
    return setup + s.repetitions * _loop(s, region, verify)


def gemm_case(name: str, card: specs.CardSpec, s: Settings) -> float:
    parts = name.split("/")
    kind, precision = parts[1], parts[2]
    rate = _gemm_rate(card, precision)
    if rate is None:
        return CALL_OVERHEAD_S * s.repetitions  # skipped: the card lacks the precision
    ab, cd = PRECISION_BYTES.get(precision, (2, 2))
    hbm = card.mem_bw * HBM_EFFICIENCY

    def one(m, n, k):
        flops = 2.0 * m * n * k
        return max(flops / rate, (m * k + k * n) * ab / hbm + m * n * cd / hbm) + KERNEL_LAUNCH_S

    def check(m, n, k):
        """launch_and_check: poison D, one GEMM, the FP64 reference of a few elements per 64 x 64
        block and 1020 more (each K long), back to the host."""
        samples = ((m + 63) // 64) * ((n + 63) // 64) * VERIFY_SAMPLES_PER_BLOCK.get(precision, 1) + 1026
        return one(m, n, k) + samples * k * 2 * ab / hbm + VERIFY_FIXED_S

    def setup(m, n, k, candidates=AUTOTUNE_CANDIDATES, warm=False):
        """Operands, then the selection (LtGemm::autotune): a warm-up (none when the sweep's previous
        shape just ran), then each candidate's regions in turn until each has AUTOTUNE_MIN_S and 3 regions."""
        per_set = (m * k + k * n) * ab + m * n * cd
        sets = max(1, min(4096, int(3 * card.l2_mb * 1e6 // per_set) + 1))
        ops = gemms_per_region(one(m, n, k))
        region = ops * one(m, n, k) + REGION_OVERHEAD_S
        select = (0.0 if warm else s.warmup) + candidates * max(AUTOTUNE_MIN_S, 3 * region)
        return sets * per_set / hbm + select + 0.02, ops

    if kind == "ceiling":
        mode = parts[3]
        if mode == "sustained":  # prepared and tuned on the first call only, checked after every window
            st, ops = setup(8192, 8192, 8192)
            c = check(8192, 8192, 8192)
            return st + c + s.repetitions * (CALL_OVERHEAD_S + s.warmup + s.sustained + c)
        first = 0.0
        for i, (m, n, k) in enumerate(CEILING_SHAPES):
            st, ops = setup(m, n, k, warm=i > 0)
            first += st + check(m, n, k) + max(s.min_time, ops * one(m, n, k))
        first += s.warmup
        m, n, k = max(CEILING_SHAPES, key=lambda x: x[0] * x[1] * x[2])
        st, ops = setup(m, n, k, warm=True)  # the best shape is prepared (and tuned) again, and kept
        first += st + check(m, n, k)
        return first + s.repetitions * (_loop(s, ops * one(m, n, k)) + check(m, n, k))
    m, n, k = _gemm_shape(name)
    probe = 0.05
    if one(m, n, k) > s.max_op:  # the executable skips it before launching (estimate from its probe)
        return probe + CALL_OVERHEAD_S * s.repetitions
    st, ops = setup(m, n, k)
    if kind.startswith("ladder_l"):
        level = int(kind[len("ladder_l")])
        if level >= 4 and not card.compute_capability.startswith("9.0"):
            return CALL_OVERHEAD_S * s.repetitions
        precision = "fp32" if level <= 1 else "bf16"
        rate = _gemm_rate(card, precision) or rate
        slow = LADDER_SLOWDOWN.get(level, 2.0)
        return (
            probe
            + st
            + s.repetitions
            * (
                _loop(s, ops * one(m, n, k) * slow)
                + _loop(s, ops * one(m, n, k))
                - CALL_OVERHEAD_S
                + 2 * check(m, n, k) * slow
            )
        )
    return probe + st + s.repetitions * (_loop(s, ops * one(m, n, k)) + 2 * check(m, n, k))


def memcpy_case(name: str, card: specs.CardSpec, s: Settings) -> float:
    parts = name.split("/")
    direction, memory, a = parts[1], parts[2], _args(name)
    size = int(a["bytes"])
    pcie = card.pcie_gbps_per_direction * 1e9 * PCIE_EFFICIENCY
    hbm = card.mem_bw * HBM_EFFICIENCY
    setup = size / 4 / HOST_CHECK_PER_S * 2  # the host pattern and the first full check
    if direction == "overlap":
        copy = size / (pcie * (PAGEABLE_FRACTION if memory == "pageable" else 1.0))
        return setup + s.repetitions * (CALL_OVERHEAD_S + 4 * copy + max(s.min_time, 3 * 3 * copy))
    if memory == "pageable":
        region = HOST_FLUSH_BYTES / HOST_MEMSET_BPS + size / (pcie * PAGEABLE_FRACTION) + SYNC_S
        return setup + s.repetitions * _loop(s, region)
    if direction == "d2d":  # movement_catalogue.cpp copy_region_plan: rotating sets, the write-back rule
        l2 = card.l2_mb * 1e6
        copy = 2 * size / hbm + KERNEL_LAUNCH_S
        sets, min_ops = cold_layout(l2, size, 2 * size, True, LATCH_OPS)
        ops = ops_for_region_time(copy, min_ops, LATCH_OPS)
        region = ops * copy + 3 * l2 / hbm
        setup = sets * size / 4 / HOST_CHECK_PER_S * 2
        return setup + s.repetitions * _loop(s, region, min_ops * copy + 3 * l2 / hbm)
    copy = size / pcie + 2e-6
    warm = 4 if size <= (16 << 20) else 1
    entries = 5 if direction == "bidir" else 1
    ops = ops_for_region_time(copy, max(1, min(32, (64 << 20) // size)), LATCH_OPS // entries - warm)
    region = (warm + ops) * copy
    loops = 2 if direction == "bidir" else 1
    calibrate = (warm + max(1, min(32, (64 << 20) // size))) * copy * loops  # the untimed region that sizes them
    return setup + s.repetitions * _loop(
        s, region * (2 if direction == "bidir" else 1), calibrate * (2 if direction == "bidir" else 1), loops=loops
    )


def launch_case(name: str, card: specs.CardSpec, s: Settings) -> float:
    parts = name.split("/")
    a = _args(name)
    if parts[1] == "chain_fit":
        kernels = sum(2**i for i in range(11))
        per = kernels * 8 * (KERNEL_LAUNCH_S + 1e-6) + 11 * 0.002  # 8 runs per length, graph builds
        return s.repetitions * (CALL_OVERHEAD_S + per)
    if parts[1] == "fusion":
        size, steps = int(a["bytes"]), int(a["steps"])
        hbm = card.mem_bw * HBM_EFFICIENCY
        kernels = 1 if parts[2] == "fused" else steps
        region = kernels * (2 * size / hbm + KERNEL_LAUNCH_S)
        return size / 4 / HOST_CHECK_PER_S + s.repetitions * _loop(s, region)
    if parts[1] == "chain":
        return s.repetitions * _loop(s, int(a["kernels"]) * KERNEL_LAUNCH_S + SYNC_S)
    return s.repetitions * _loop(s, 1e-3)


def allreduce_case(name: str, card: specs.CardSpec, s: Settings, gpus: int) -> float:
    a = _args(name)
    size = int(a["bytes"])
    ranks = int(a.get("gpus", gpus))
    if ranks > gpus:
        return CALL_OVERHEAD_S * s.repetitions
    link = card.nvlink_gbps / 2 * 1e9 if card.nvlink_gbps and ranks > 1 else card.mem_bw / 2
    one = NCCL_LATENCY_S + size * (2.0 * (ranks - 1) / ranks if ranks > 1 else 1.0) / link
    ops = max(20, min(200, (32 << 20) // max(size, 1)))
    check = size / 4 / HOST_CHECK_PER_S / 20  # counted on the device; a little host work
    return s.repetitions * _loop(s, ops * one, check)


def representative_pairs(card: specs.CardSpec, gpus: int) -> list[tuple[int, int]]:
    """The ordered pairs --pairs=representative measures, as the model assumes them: one link type
    on an NVLink/NVSwitch card (every pair NV#), up to three on PCIe (one switch, one socket, across
    sockets), the first pairs in catalogue order. The real ones are chosen at run time from the topology."""
    pairs = [(i, j) for i in range(gpus) for j in range(gpus) if i != j]
    return pairs[: 1 if card.nvlink_gbps else 3]


def p2p_case(name: str, card: specs.CardSpec, s: Settings, gpus: int) -> float:
    parts = name.split("/")
    a = _args(name)
    src, dst = int(a["src"]), int(a["dst"])
    if gpus < 2 or src >= gpus or dst >= gpus:
        return s.repetitions * 0.002  # skipped with the reason at once
    if s.pairs == "representative" and (src, dst) not in representative_pairs(card, gpus):
        return s.repetitions * 0.002
    size = int(a["bytes"])
    link = (card.nvlink_gbps / 2 * 1e9 if card.nvlink_gbps else card.pcie_gbps_per_direction * 1e9) * PCIE_EFFICIENCY
    setup = 2 * size / 4 / HOST_CHECK_PER_S  # pattern and the first full check
    if parts[1] == "small_copy":
        return setup + s.repetitions * _loop(s, 100 * 5e-6)
    copy = size / link + 2e-6
    warm = 4 if size <= (16 << 20) else 1
    fewest = max(1, min(32, (64 << 20) // size))
    ops = ops_for_region_time(copy, fewest, LATCH_OPS // (5 if parts[2] == "bidir" else 1) - warm)
    region = (warm + ops) * copy
    loops = 2 if parts[2] == "bidir" else 1
    return setup + s.repetitions * _loop(s, region * loops, (warm + fewest) * copy * loops, loops=loops)


def estimate_cases(executable: str, names: list[str], card: specs.CardSpec, s: Settings, gpus: int = 1) -> ExeEstimate:
    startup = EXE_STARTUP_S
    if executable == "triaudit_allreduce":
        algos = {(_args(n).get("algo") or "auto") for n in names}
        startup += NCCL_INIT_S * (len(algos) + 1) + 0.002 * len(names)  # communicators per variant, the choice probe
    out = ExeEstimate(executable, startup)
    for name in names:
        corner = corner_named(name.split("/")[0])
        model = globals().get(corner.time_model) if corner else None
        if model is None:
            sec = s.repetitions * _loop(s, 1e-3)
        elif corner.per_gpu:
            sec = model(name, card, s)
        else:
            sec = model(name, card, s, gpus)
        out.cases.append(CaseEstimate(name.removesuffix("/manual_time"), sec))
    return out


def list_cases(exe: Path, args: list[str]) -> list[str]:
    """The cases a profile runs, from the executable's own catalogue (no GPU needed)."""
    keep = [
        a
        for a in args
        if not a.startswith(("--benchmark_repetitions", "--benchmark_out", "--benchmark_display_aggregates_only"))
    ]
    try:
        p = subprocess.run([str(exe), *keep, "--benchmark_list_tests"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise ModelError(f"{exe}: could not list its cases: {e}") from e
    if p.returncode != 0:
        raise ModelError(f"{exe.name} refused the profile's arguments: {(p.stderr or p.stdout).strip()[:300]}")
    return [line.strip() for line in p.stdout.splitlines() if line.strip()]


def card_by_key(key: str) -> specs.CardSpec:
    """specs.card_by_key (a key such as h200, or a name CUDA gives), as a ModelError when unknown."""
    try:
        return specs.card_by_key(key)
    except KeyError as e:
        raise ModelError(e.args[0]) from None


def format_estimate(estimates: list[ExeEstimate], card: specs.CardSpec, profile: str, top: int = 5) -> str:
    lines = [f"Estimated wall time of profile {profile!r} on {card.name} (datasheet rates, not a measurement):"]
    for e in estimates:
        lines.append(f"  {e.executable:<22} {e.seconds:7.1f} s  ({len(e.cases)} cases, startup {e.startup:.1f} s)")
    total = sum(e.seconds for e in estimates)
    lines.append(f"  {'total':<22} {total:7.1f} s")
    longest = sorted((c for e in estimates for c in e.cases), key=lambda c: -c.seconds)[:top]
    if longest:
        lines.append("  longest cases: " + "; ".join(f"{c.name} {c.seconds:.1f} s" for c in longest))
    return "\n".join(lines)


def estimate_profile(
    build_dir: Path,
    profile: str,
    card_key: str,
    only: list[str] | None = None,
    extra_args: list[str] | None = None,
    gpus: int = 1,
) -> tuple[list[ExeEstimate], specs.CardSpec]:
    """Every executable of `profile` found under `build_dir`, its cases and their estimated time."""
    card = card_by_key(card_key)
    if profile not in profiles.PROFILES:
        raise ModelError(f"unknown profile {profile!r}; choose one of {', '.join(profiles.PROFILES)}")
    exes = profiles.find_steps(build_dir, only)
    if not exes:
        raise ModelError(f"no triaudit executables under {build_dir}: build first (the dry run lists their cases)")
    out = []
    for step, exe in exes.items():
        args = profiles.profile_args(profile, step) + list(extra_args or [])
        e = estimate_cases(profiles.STEP_EXECUTABLE[step], list_cases(exe, args), card, settings_from_args(args), gpus)
        e.executable = step
        out.append(e)
    return out, card
