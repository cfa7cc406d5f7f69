"""Compute: GEMM per precision through cuBLASLt (square, LLM layers, misaligned, the burst and
sustained ceilings) and the ladder of hand-written Tensor Core kernels (triaudit_gemm; the ladder is
a step of its own). Case names: `gemm/cublaslt/<precision>/layout:<l>/m:<m>/n:<n>/k:<k>`,
`gemm/cublaslt/<precision>/llm:<layer>/tokens:<t>`, `gemm/ceiling/<precision>/<burst|sustained>`,
`gemm/ladder_l<N>_<idea>/<precision>/layout:<l>/m:<m>/n:<n>/k:<k>`."""

from __future__ import annotations

import math

from triaudit.core import specs
from triaudit.corners import timing as t
from triaudit.corners.base import FULL_WARMUP, QUICK_WARMUP, REPS, Check, Corner, EnergyFigure, Headline, PeerTool, Step

# The GEMM selection and checks (benchmarks/gemm): candidates the heuristic offers, the timed
# seconds each gets, and the fixed cost of one checked launch (the copies back, the host's loop).
AUTOTUNE_CANDIDATES = 8
AUTOTUNE_MIN_S = 0.02
VERIFY_FIXED_S = 0.003
MIN_REGION_S = t.MIN_REGION_S  # gemm_catalogue.hpp kMinRegionSeconds
# Samples per 64 x 64 block of D the check takes (gemm_bound.cpp gemm_block_sampling), the most any
# K up to 16384 needs: enough that a k-tile lost in one CTA is caught with probability 0.99.
VERIFY_SAMPLES_PER_BLOCK = {"fp32": 2, "tf32": 3, "fp16": 2, "fp16acc16": 26, "bf16": 3, "fp8e4m3": 3, "fp8e4m3fast": 8}
PROBE_S = 0.05  # the first GEMM that tells whether a shape fits --max-op-seconds


def gemms_per_region(seconds_per_gemm: float) -> int:
    """gemm_catalogue.cpp gemms_per_region: >= 0.5 ms of GEMMs per region, 1 to 31."""
    if not seconds_per_gemm > 0:
        return 1
    return int(min(31, max(1, math.ceil(MIN_REGION_S / seconds_per_gemm))))


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


def gemm_rate(card: specs.CardSpec, precision: str) -> float | None:
    for key in PRECISION_RATE.get(precision, ()):
        rate = card.peak_flops(key)
        if rate:
            return rate * t.GEMM_EFFICIENCY
    return None


class ShapeUnknown(ValueError):
    """A GEMM case whose shape neither its name nor its description (schema 2) gives."""


def gemm_shape(name: str, axes: dict | None = None) -> tuple[int, int, int]:
    """m, n, k of a case: from its description (`--describe-cases`: an LLM layer's name gives only its
    layer and tokens), else from its name's m:/n:/k:."""
    a = {**t.name_args(name), **(axes or {})}
    try:
        return int(a["m"]), int(a["n"]), int(a["k"])
    except (KeyError, ValueError):
        raise ShapeUnknown(f"{name}: no m, n, k in its name or its description (rebuild triaudit_gemm)") from None


def sweep_shapes(name: str, axes: dict | None) -> list[tuple[int, int, int]]:
    """The shapes a ceiling's burst sweep tries, from its description's `shapes` axis (m x n x k, ...)."""
    shapes = (axes or {}).get("shapes", "")
    try:
        return [tuple(int(d) for d in s.split("x")) for s in shapes.split(",") if s]  # type: ignore[misc]
    except ValueError:
        raise ShapeUnknown(f"{name}: its description's shapes {shapes!r} are not m x n x k") from None


def gemm_case(name: str, card: specs.CardSpec, s: t.Settings, gpus: int = 1, axes: dict | None = None) -> float:
    parts = name.split("/")
    kind, precision = parts[1], parts[2]
    rate = gemm_rate(card, precision)
    if rate is None:
        return t.CALL_OVERHEAD_S * s.repetitions  # skipped: the card lacks the precision
    ab, cd = PRECISION_BYTES.get(precision, (2, 2))
    hbm = card.mem_bw * t.HBM_EFFICIENCY

    def one(m, n, k):
        flops = 2.0 * m * n * k
        return max(flops / rate, (m * k + k * n) * ab / hbm + m * n * cd / hbm) + t.KERNEL_LAUNCH_S

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
        region = ops * one(m, n, k) + t.REGION_OVERHEAD_S
        select = (0.0 if warm else s.warmup) + candidates * max(AUTOTUNE_MIN_S, 3 * region)
        return sets * per_set / hbm + select + 0.02, ops

    if kind == "ceiling":
        mode = parts[3]
        if mode == "sustained":  # prepared and tuned on the first call only, checked after every window
            m, n, k = gemm_shape(name, axes)
            st, ops = setup(m, n, k)
            c = check(m, n, k)
            return st + c + s.repetitions * (t.CALL_OVERHEAD_S + s.warmup + s.sustained + c)
        shapes = sweep_shapes(name, axes)
        if not shapes:
            raise ShapeUnknown(f"{name}: its description names no shapes of its sweep (rebuild triaudit_gemm)")
        first = 0.0
        for i, (m, n, k) in enumerate(shapes):
            st, ops = setup(m, n, k, warm=i > 0)
            first += st + check(m, n, k) + max(s.min_time, ops * one(m, n, k))
        first += s.warmup
        m, n, k = max(shapes, key=lambda x: x[0] * x[1] * x[2])
        st, ops = setup(m, n, k, warm=True)  # the best shape is prepared (and tuned) again, and kept
        first += st + check(m, n, k)
        return first + s.repetitions * (t.loop(s, ops * one(m, n, k)) + check(m, n, k))
    m, n, k = gemm_shape(name, axes)
    if one(m, n, k) > s.max_op:  # the executable skips it before launching (estimate from its probe)
        return PROBE_S + t.CALL_OVERHEAD_S * s.repetitions
    st, ops = setup(m, n, k)
    if kind.startswith("ladder_l"):
        level = int(kind[len("ladder_l")])
        if level >= 4 and not card.compute_capability.startswith("9.0"):
            return t.CALL_OVERHEAD_S * s.repetitions
        rate = gemm_rate(card, "fp32" if level <= 1 else "bf16") or rate
        slow = LADDER_SLOWDOWN.get(level, 2.0)
        return (
            PROBE_S
            + st
            + s.repetitions
            * (
                t.loop(s, ops * one(m, n, k) * slow)
                + t.loop(s, ops * one(m, n, k))
                - t.CALL_OVERHEAD_S
                + 2 * check(m, n, k) * slow
            )
        )
    return PROBE_S + st + s.repetitions * (t.loop(s, ops * one(m, n, k)) + 2 * check(m, n, k))


# The precisions a card is quoted by: each one's burst figure (the ceiling, else the 8192^3 GEMM),
# and for BF16 and FP8 the sustained one. INT8 is counted in operations (TOP/s).
NAMES = {
    "fp64": "FP64",
    "fp32": "FP32",
    "tf32": "TF32",
    "fp16": "FP16",
    "bf16": "BF16",
    "fp8e4m3": "FP8 (E4M3)",
    "int8": "INT8",
}
SHOWN = ("bf16", "fp8e4m3")


def _headlines() -> tuple[Headline, ...]:
    out = []
    for p, name in NAMES.items():
        ops = p == "int8"
        unit = "TOP/s" if ops else "TFLOP/s"
        for mode in ("burst", "sustained"):
            if mode == "sustained" and p not in SHOWN:
                continue
            sources: tuple[str, ...] = (f"gemm/ceiling/{p}/{mode}",)
            if mode == "burst":  # older runs' ceiling (shapes:N), then the square GEMM of the sweep
                sources += (f"gemm/ceiling/{p}/shapes:*", f"gemm/cublaslt/{p}/layout:tn/m:8192/n:8192/k:8192")
            roles = [f"flops:{p}", f"energy_{mode}"] if mode == "burst" else [f"energy_{mode}"]
            if p == "bf16" and mode == "burst":
                roles.append("ridge_flops")
            out.append(
                Headline(
                    f"{p}/{mode}",
                    f"{name} dense GEMM, {mode} ({unit})",
                    "ops" if ops else "flops",
                    1e12,
                    sources,
                    datasheet=f"compute:{p}",
                    roles=tuple(roles),
                    shown=p in SHOWN,
                )
            )
    return tuple(out)


def _gemm_check(p: str, label: str) -> Check:
    return Check(
        f"gemm_{p.removesuffix('e4m3')}",
        f"{label} GEMM",
        "gpu",
        "flops",
        True,
        f"{p}/burst",
        ("TFLOP/s", 1e12),
        "triaudit_gemm_flops_per_second",
        "GEMM throughput (floating-point operations per second)",
        {"precision": p},
    )


CORNER = Corner(
    name="gemm",
    account="compute",
    title="Compute (GEMM)",
    order=20,
    steps=(
        Step(
            "triaudit_gemm",
            "triaudit_gemm",
            {
                "quick": (
                    "--families=square,ceiling",
                    "--max-square=8192",
                    "--min-time=0.03",
                    QUICK_WARMUP,
                    "--sustained-s=0.5",
                    REPS,
                    "--benchmark_filter=^gemm/(cublaslt/(bf16|fp8e4m3)/layout:tn/m:8192/|ceiling/bf16/)",
                ),
                "full": (
                    "--families=square,llm,misaligned,ceiling",
                    "--max-square=8192",
                    "--min-time=0.05",
                    FULL_WARMUP,
                    "--sustained-s=2",
                    REPS,
                    "--benchmark_filter=^gemm/(cublaslt/[a-z0-9]+/layout:tn/m:8192/|cublaslt/(bf16|tf32|fp64)/"
                    "layout:nn/m:8192/|cublaslt/bf16/llm:[a-z0-9_-]+/tokens:(1|4096)/|"
                    "cublaslt/fp8e4m3/llm:llama2-70b[a-z_-]+/tokens:(1|4096)/|cublaslt/bf16/layout:nn/m:8193/|"
                    "ceiling/(fp64|tf32|fp16|bf16|fp8e4m3|int8)/burst|ceiling/(bf16|fp8e4m3)/sustained)",
                ),
                "exhaustive": ("--families=square,llm,misaligned,ceiling", "--min-time=0.05", REPS),
            },
        ),
        # The hand-written ladder is a step of its own, run last: the wgmma levels are the likeliest
        # to hang, and a hang then costs no other corner.
        Step(
            "triaudit_gemm_ladder",
            "triaudit_gemm",
            {
                "quick": (
                    "--families=ladder",
                    "--min-time=0.03",
                    QUICK_WARMUP,
                    REPS,
                    "--benchmark_filter=^gemm/ladder_l[35]_[a-z0-9_]+/bf16/layout:tn/m:8192/",
                ),
                "full": (
                    "--families=ladder",
                    "--min-time=0.05",
                    FULL_WARMUP,
                    REPS,
                    "--benchmark_filter=^gemm/(ladder_l[01]_[a-z0-9_]+/fp32/layout:tn/m:1024/|"
                    "ladder_l[2-5]_[a-z0-9_]+/bf16/layout:tn/m:8192/)",
                ),
                "exhaustive": ("--families=ladder", "--min-time=0.05", REPS),
            },
        ),
    ),
    judged="flops",
    time_model=gemm_case,
    headlines=_headlines(),
    checks=(_gemm_check("bf16", "BF16"), _gemm_check("fp8e4m3", "FP8 (E4M3)")),
    energy=(EnergyFigure("bf16/burst", "BF16 burst GEMM, energy per FLOP (pJ)", 1e-12),),
    peers=(PeerTool("mamf-finder"), PeerTool("torch")),
    section="gemm",
)
