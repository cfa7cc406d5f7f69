"""Movement between host and device, and within a device (triaudit_memcpy): pageable, pinned,
registered, write-combined and zero-copy host memory, each direction and both at once, device
copies, copy/compute overlap. Case names: `memcpy/<h2d|d2h|bidir|d2d|overlap>/<memory>/bytes:<N>`."""

from __future__ import annotations

from triaudit.core import specs
from triaudit.corners import timing as t
from triaudit.corners.base import FULL_WARMUP, QUICK_WARMUP, REPS, Check, Corner, Headline, PeerTool, Step


def memcpy_case(name: str, card: specs.CardSpec, s: t.Settings, gpus: int = 1, axes: dict | None = None) -> float:
    parts = name.split("/")
    direction, memory, a = parts[1], parts[2], t.name_args(name)
    size = int(a["bytes"])
    pcie = card.pcie_gbps_per_direction * 1e9 * t.PCIE_EFFICIENCY
    hbm = card.mem_bw * t.HBM_EFFICIENCY
    setup = size / 4 / t.HOST_CHECK_PER_S * 2  # the host pattern and the first full check
    if direction == "overlap":
        copy = size / (pcie * (t.PAGEABLE_FRACTION if memory == "pageable" else 1.0))
        return setup + s.repetitions * (t.CALL_OVERHEAD_S + 4 * copy + max(s.min_time, 3 * 3 * copy))
    if memory == "pageable":
        region = t.HOST_FLUSH_BYTES / t.HOST_MEMSET_BPS + size / (pcie * t.PAGEABLE_FRACTION) + t.SYNC_S
        return setup + s.repetitions * t.loop(s, region)
    if direction == "d2d":  # movement_catalogue.cpp copy_region_plan: rotating sets, the write-back rule
        l2 = card.l2_mb * 1e6
        copy = 2 * size / hbm + t.KERNEL_LAUNCH_S
        sets, min_ops = t.cold_layout(l2, size, 2 * size, True, t.LATCH_OPS)
        ops = t.ops_for_region_time(copy, min_ops, t.LATCH_OPS)
        region = ops * copy + 3 * l2 / hbm
        setup = sets * size / 4 / t.HOST_CHECK_PER_S * 2
        return setup + s.repetitions * t.loop(s, region, min_ops * copy + 3 * l2 / hbm)
    copy = size / pcie + 2e-6
    warm = 4 if size <= (16 << 20) else 1
    entries = 5 if direction == "bidir" else 1
    ops = t.ops_for_region_time(copy, max(1, min(32, (64 << 20) // size)), t.LATCH_OPS // entries - warm)
    region = (warm + ops) * copy
    loops = 2 if direction == "bidir" else 1
    calibrate = (warm + max(1, min(32, (64 << 20) // size))) * copy * loops  # the untimed region that sizes them
    return setup + s.repetitions * t.loop(
        s, region * (2 if direction == "bidir" else 1), calibrate * (2 if direction == "bidir" else 1), loops=loops
    )


def _copy(key: str, label: str, glob: str, datasheet: str = "pcie", shown: bool = True, roles=()) -> Headline:
    return Headline(
        key, label, "bytes_per_second", 1e9, (glob,), largest="bytes", datasheet=datasheet, shown=shown, roles=roles
    )


def _check(id_: str, label: str, headline: str) -> Check:
    return Check(
        id_,
        label,
        "gpu",
        "bytes_per_second",
        True,
        headline,
        ("GB/s", 1e9),
        "triaudit_copy_bytes_per_second",
        "pinned host-device and device-device copies (bytes per second)",
        {"direction": id_},
    )


CORNER = Corner(
    name="memcpy",
    account="movement",
    title="Movement: host and device copies",
    order=30,
    steps=(
        Step(
            "triaudit_memcpy",
            "triaudit_memcpy",
            {
                "quick": (
                    "--directions=h2d,d2h,d2d,bidir",
                    "--max-bytes=256MiB",
                    "--min-time=0.03",
                    QUICK_WARMUP,
                    REPS,
                    "--benchmark_filter=^memcpy/((h2d|d2h)/pinned/bytes:(4096|268435456)|h2d/pageable/"
                    "bytes:268435456|d2d/copy_engine/bytes:268435456|bidir/pinned/bytes:268435456)/",
                ),
                "full": (
                    "--min-time=0.05",
                    FULL_WARMUP,
                    REPS,
                    "--benchmark_filter=(/bytes:(4096|268435456)/|pinned/bytes:1073741824/|^memcpy/overlap/)",
                ),
                "exhaustive": ("--min-time=0.05", "--step=2", REPS),
            },
        ),
    ),
    judged="bytes_per_second",
    time_model=memcpy_case,
    headlines=(
        _copy(
            "h2d",
            "pinned copy host → device, largest (GB/s, % of the PCIe link)",
            "memcpy/h2d/pinned/bytes:*",
            roles=("host_pinned",),
        ),
        _copy("d2h", "pinned copy device → host, largest (GB/s, % of the PCIe link)", "memcpy/d2h/pinned/bytes:*"),
        _copy(
            "h2d/pageable",
            "pageable copy host → device, largest (GB/s)",
            "memcpy/h2d/pageable/bytes:*",
            shown=False,
            roles=("host_pageable",),
        ),
        _copy(
            "d2d",
            "device → device copy, copy engine, largest (GB/s, counted once)",
            "memcpy/d2d/copy_engine/bytes:*",
            datasheet="",
            shown=False,
        ),
    ),
    checks=(
        _check("h2d", "host to device, pinned", "h2d"),
        _check("d2h", "device to host, pinned", "d2h"),
        _check("d2d", "device to device, copy engine", "d2d"),
    ),
    peers=(PeerTool("nvbandwidth", ("host_to_device", "device_to_host", "device_local_copy")),),
    section="memcpy",
)
