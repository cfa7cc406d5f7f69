"""Bandwidth: STREAM copy, scale, add, triad and dot (triaudit_stream), hot and cold L2, from L2-sized
arrays to far beyond L2, and a sustained triad. Case names:
`stream/<op>/<type>/cache:<hot|cold>/bytes:<N>`, `stream/triad_sustained/<type>/cache:cold/bytes:<N>`."""

from __future__ import annotations

from triaudit.core import specs
from triaudit.corners import timing as t
from triaudit.corners.base import FULL_WARMUP, QUICK_WARMUP, REPS, Check, Corner, EnergyFigure, Headline, PeerTool, Step


def stream_case(name: str, card: specs.CardSpec, s: t.Settings, gpus: int = 1, axes: dict | None = None) -> float:
    parts = name.split("/")
    op, a = parts[1], t.name_args(name)
    size = int(a["bytes"])
    arrays = 3 if op.startswith(("add", "triad")) else 2
    hbm = card.mem_bw * t.HBM_EFFICIENCY
    l2 = card.l2_mb * 1e6
    moved = arrays * size
    cold = a.get("cache") == "cold"
    bw = hbm if cold or moved > l2 / 2 else hbm * t.L2_SPEEDUP
    op_s = moved / bw + t.KERNEL_LAUNCH_S
    max_ops = t.LATCH_OPS // (2 if op == "dot" else 1)
    sustained = op.endswith("_sustained")
    flush = cold and not (sustained and moved >= 3 * l2)
    sets, min_ops = t.cold_layout(l2, 0 if op == "dot" else size, moved, flush, max_ops) if cold else (1, 1)
    ops = t.ops_for_region_time(op_s, min_ops, max_ops)
    region = ops * op_s + (3 * l2 / hbm if flush else 0.0)
    # Every call fills a, b, c and poisons the output of every set (4 arrays written), times one
    # region of the fewest operations to size the others, then checks every output element on the
    # device (one read): nothing of the arrays crosses to the host.
    verify = sets * (5 * size / hbm + 5 * t.KERNEL_LAUNCH_S) + min_ops * op_s + t.REGION_OVERHEAD_S
    if sustained:
        return s.repetitions * (t.CALL_OVERHEAD_S + max(s.warmup, region) + s.sustained + verify)
    return s.repetitions * t.loop(s, region, verify)


TRIAD = Headline(
    "triad",
    "memory: STREAM triad, largest array, L2 flushed (TB/s)",
    "bytes_per_second",
    1e12,
    # FP32 where measured (the STREAM default), else the type the card has.
    ("stream/triad/fp32/cache:cold/bytes:*", "stream/triad/fp64/cache:cold/bytes:*"),
    largest="bytes",
    datasheet="bandwidth",
    roles=("hbm", "ridge_bytes", "energy_burst"),
)
TRIAD_SUSTAINED = Headline(
    "triad/sustained",
    "memory: STREAM triad held under load, L2 flushed (TB/s)",
    "bytes_per_second",
    1e12,
    ("stream/triad_sustained/fp32/cache:cold/bytes:*", "stream/triad_sustained/fp64/cache:cold/bytes:*"),
    largest="bytes",
    datasheet="bandwidth",
    roles=("energy_sustained",),
    shown=False,
)

CORNER = Corner(
    name="stream",
    account="bandwidth",
    title="Bandwidth (STREAM)",
    order=10,
    steps=(
        Step(
            "triaudit_stream",
            "triaudit_stream",
            {
                # Nightly CI: the figures a regression would show in, about a minute on an H200 (all corners).
                "quick": (
                    "--ops=copy,triad",
                    "--types=fp32",
                    "--min-bytes=4MiB",
                    "--min-time=0.03",
                    QUICK_WARMUP,
                    "--sustained-s=0.5",
                    REPS,
                    "--benchmark_filter=(triad/fp32/cache:cold/bytes:1073741824|triad/fp32/cache:hot/"
                    "bytes:4194304|triad_sustained/.*)/",
                ),
                # Evaluation: the sizes and types a comparison table needs; sustained: 2 s per repetition.
                "full": (
                    "--min-bytes=1MiB",
                    "--min-time=0.05",
                    FULL_WARMUP,
                    "--sustained-s=2",
                    REPS,
                    "--benchmark_filter=(fp32/cache:cold/bytes:(1048576|16777216|268435456|1073741824)|"
                    "triad/fp64/cache:cold/bytes:(16777216|1073741824)|(copy|triad)/fp32/cache:hot/"
                    "bytes:(1048576|4194304)|triad_sustained/.*)/",
                ),
                "exhaustive": ("--min-time=0.05", REPS),
            },
        ),
    ),
    judged="bytes_per_second",
    time_model=stream_case,
    headlines=(TRIAD, TRIAD_SUSTAINED),
    checks=(
        Check(
            "hbm",
            "HBM bandwidth (STREAM triad, L2 flushed, largest arrays)",
            "gpu",
            "bytes_per_second",
            True,
            "triad",
            ("GB/s", 1e9),
            "triaudit_hbm_bytes_per_second",
            "HBM bandwidth, STREAM triad (bytes per second)",
        ),
    ),
    energy=(EnergyFigure("triad", "memory triad, energy per byte moved (pJ)", 1e-12),),
    peers=(PeerTool("babelstream", ("Copy", "Mul", "Add", "Triad", "Dot")),),
    section="stream",
)
