"""Movement between the GPUs of a node (triaudit_p2p, once over all of them): every ordered pair by
copy engine (source or destination issued), SM read and SM write, one direction and both, staged
through the host, back-to-back small copies (`p2p/small_copy/...`, `p2p/latency/...` before schema 2). Case names:
`p2p/<ce|ce_dst|sm_read|sm_write|staged>/<uni|bidir>/src:<i>/dst:<j>/bytes:<N>`; the link of each
pair is in the context (`p2p_link_<i>_<j>`: NV<k>, PIX, PXB, PHB, NODE, SYS)."""

from __future__ import annotations

from triaudit.core import specs
from triaudit.corners import timing as t
from triaudit.corners.base import FULL_WARMUP, QUICK_WARMUP, REPS, Check, Corner, Headline, PeerTool, Step


def representative_pairs(card: specs.CardSpec, gpus: int) -> list[tuple[int, int]]:
    """The ordered pairs --pairs=representative measures, as the model assumes them: one link type
    on an NVLink/NVSwitch card (every pair NV#), up to three on PCIe (one switch, one socket, across
    sockets), the first pairs in catalogue order. The real ones are chosen at run time from the topology."""
    pairs = [(i, j) for i in range(gpus) for j in range(gpus) if i != j]
    return pairs[: 1 if card.nvlink_gbps else 3]


def p2p_case(name: str, card: specs.CardSpec, s: t.Settings, gpus: int = 1, axes: dict | None = None) -> float:
    parts = name.split("/")
    a = t.name_args(name)
    src, dst = int(a["src"]), int(a["dst"])
    if gpus < 2 or src >= gpus or dst >= gpus:
        return s.repetitions * 0.002  # skipped with the reason at once
    if s.pairs == "representative" and (src, dst) not in representative_pairs(card, gpus):
        return s.repetitions * 0.002
    size = int(a["bytes"])
    link = (card.nvlink_gbps / 2 * 1e9 if card.nvlink_gbps else card.pcie_gbps_per_direction * 1e9) * t.PCIE_EFFICIENCY
    setup = 2 * size / 4 / t.HOST_CHECK_PER_S  # pattern and the first full check
    if parts[1] in ("small_copy", "latency"):  # back-to-back small copies (latency: schema 1's name)
        return setup + s.repetitions * t.loop(s, 100 * 5e-6)
    copy = size / link + 2e-6
    warm = 4 if size <= (16 << 20) else 1
    fewest = max(1, min(32, (64 << 20) // size))
    ops = t.ops_for_region_time(copy, fewest, t.LATCH_OPS // (5 if parts[2] == "bidir" else 1) - warm)
    region = (warm + ops) * copy
    loops = 2 if parts[2] == "bidir" else 1
    return setup + s.repetitions * t.loop(s, region * loops, (warm + fewest) * copy * loops, loops=loops)


# The copy engine, one direction, at the largest size: per link type the slowest and fastest pair.
PAIRS = ("p2p/ce/uni/src:*/dst:*/bytes:*",)

CORNER = Corner(
    name="p2p",
    account="movement",
    title="Movement: GPU to GPU",
    order=50,
    steps=(
        Step(
            "triaudit_p2p",
            "triaudit_p2p",
            {
                "quick": (
                    "--tests=ce,small_copy",
                    "--pairs=representative",
                    "--min-bytes=512MiB",
                    "--min-time=0.03",
                    QUICK_WARMUP,
                    REPS,
                    "--benchmark_filter=^p2p/(ce/(uni|bidir)/.*/bytes:536870912|small_copy/ce/.*/bytes:4)/",
                ),
                "full": (
                    "--tests=ce,sm_write,small_copy",
                    "--min-bytes=8MiB",
                    "--min-time=0.05",
                    FULL_WARMUP,
                    REPS,
                    "--benchmark_filter=^p2p/((ce|sm_write)/(uni|bidir)/.*/bytes:(8388608|536870912)|small_copy/ce/.*/bytes:4)/",
                ),
                "exhaustive": ("--staged=on", "--min-time=0.05", REPS),
            },
        ),
    ),
    scope="node",
    gpus_context="p2p_gpu_count",
    judged="bytes_per_second",
    time_model=p2p_case,
    headlines=(
        Headline(
            "p2p/{link}/slowest",
            "GPU↔GPU over {link}, slowest pair (ce uni, GB/s)",
            "bytes_per_second",
            1e9,
            PAIRS,
            largest="bytes",
            best="min",
            per_link="slowest",
        ),
        Headline(
            "p2p/{link}/fastest",
            "GPU↔GPU over {link}, fastest pair (ce uni, GB/s)",
            "bytes_per_second",
            1e9,
            PAIRS,
            largest="bytes",
            best="max",
            per_link="fastest",
        ),
    ),
    checks=(
        Check(
            "p2p",
            "GPU to GPU, copy engine, one direction (slowest pair of each link type)",
            "node",
            "bytes_per_second",
            True,
            "p2p/{link}/slowest",
            ("GB/s", 1e9),
            "triaudit_p2p_bytes_per_second",
            "GPU-to-GPU copy, the slowest pair of a link type (bytes per second)",
        ),
    ),
    peers=(PeerTool("nvbandwidth", ("device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce")),),
    section="p2p",
)
