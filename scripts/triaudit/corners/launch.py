"""Movement of work: what it costs to start a kernel (triaudit_launch): enqueue and round trip, eager
and CUDA Graph chains with a line fit, fused against unfused chains, synchronisation. Case names:
`launch/empty/<enqueue|round_trip>/kernels:<N>`, `launch/chain/<eager|graph>/kernels:<N>`,
`launch/chain_fit/<eager|graph>`, `launch/fusion/<fused|unfused>/steps:<s>/bytes:<N>`, `launch/sync/...`."""

from __future__ import annotations

from triaudit.core import specs
from triaudit.corners import timing as t
from triaudit.corners.base import FULL_WARMUP, QUICK_WARMUP, REPS, Check, Corner, Headline, Step


def launch_case(name: str, card: specs.CardSpec, s: t.Settings, gpus: int = 1, axes: dict | None = None) -> float:
    parts = name.split("/")
    a = t.name_args(name)
    if parts[1] == "chain_fit":
        kernels = sum(2**i for i in range(11))
        per = kernels * 8 * (t.KERNEL_LAUNCH_S + 1e-6) + 11 * 0.002  # 8 runs per length, graph builds
        return s.repetitions * (t.CALL_OVERHEAD_S + per)
    if parts[1] == "fusion":
        size, steps = int(a["bytes"]), int(a["steps"])
        hbm = card.mem_bw * t.HBM_EFFICIENCY
        kernels = 1 if parts[2] == "fused" else steps
        region = kernels * (2 * size / hbm + t.KERNEL_LAUNCH_S)
        return size / 4 / t.HOST_CHECK_PER_S + s.repetitions * t.loop(s, region)
    if parts[1] == "chain":
        return s.repetitions * t.loop(s, int(a["kernels"]) * t.KERNEL_LAUNCH_S + t.SYNC_S)
    return s.repetitions * t.loop(s, 1e-3)


def _per_kernel(variant: str, label: str) -> Headline:
    # The line fit's slope where measured; older runs, without the fit: the longest chain's per-kernel time.
    return Headline(
        f"launch/{variant}",
        f"kernel launch, {label} (µs per kernel, chain fit)",
        "per_kernel_s",
        1e-6,
        (f"launch/chain_fit/{variant}*", f"launch/chain/{variant}/kernels:*"),
        largest="kernels",
        best="min",
        roles=(f"launch_{variant}",),
    )


CORNER = Corner(
    name="launch",
    account="movement",
    title="Movement: kernel launches",
    order=40,
    steps=(
        Step(
            "triaudit_launch",
            "triaudit_launch",
            {
                "quick": (
                    "--min-time=0.03",
                    QUICK_WARMUP,
                    REPS,
                    "--benchmark_filter=^launch/(empty/enqueue|chain_fit|fusion/(fused|unfused)/steps:64/"
                    "bytes:65536/|sync/stream_synchronize)",
                ),
                "full": (
                    "--min-time=0.05",
                    FULL_WARMUP,
                    REPS,
                    "--benchmark_filter=^launch/(empty|chain/(eager|graph)/kernels:(1|1000)/|chain_fit|fusion|sync)",
                ),
                "exhaustive": ("--min-time=0.05", REPS),
            },
        ),
    ),
    judged="per_kernel_s",
    time_model=launch_case,
    headlines=(
        _per_kernel("eager", "eager"),
        _per_kernel("graph", "CUDA Graph"),
        Headline(
            "launch/enqueue",
            "kernel enqueue, eager (µs per launch)",
            "time_s",
            1e-6,
            ("launch/empty/enqueue/kernels:*",),
            largest="kernels",
            best="min",
            shown=False,
        ),
    ),
    checks=(
        Check(
            "launch",
            "kernel launch (eager enqueue)",
            "gpu",
            "time_s",
            False,
            "launch/enqueue",
            ("µs", 1e-6),
            "triaudit_launch_seconds",
            "eager kernel enqueue time (seconds per launch)",
        ),
    ),
    section="launch",
)
