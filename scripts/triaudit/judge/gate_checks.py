"""What `triaudit gate` measures a GPU on: the catalogue of performance checks, each with the
counter it reads, its direction, its unit and the cases that stand for it. Standard library only
(the floors loader and the command's parser read it).

A floor names the exact case it holds (a fleet's floors are derived from the case its runs had);
`candidates` are the cases, in order of preference, that `floors derive` looks for, a `*` standing
for the size, of which the largest measured is taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PASS, WARN, FAIL, NOT_TESTED = "PASS", "WARN", "FAIL", "NOT TESTED"
STATUSES = (PASS, WARN, FAIL, NOT_TESTED)


@dataclass(frozen=True)
class Check:
    id: str
    label: str
    scope: str  # "gpu": one verdict per GPU; "node": one per node (p2p: one per link type)
    metric: str  # the counter judged
    higher_better: bool
    candidates: tuple[str, ...]
    unit: tuple[str, float]  # how people read it: (label, divisor from base units)
    prom_name: str  # the Prometheus metric of the measured figure (base units)
    prom_labels: dict = field(default_factory=dict)


CHECKS: dict[str, Check] = {
    c.id: c
    for c in (
        Check(
            "hbm",
            "HBM bandwidth (STREAM triad, L2 flushed, largest arrays)",
            "gpu",
            "bytes_per_second",
            True,
            ("stream/triad/fp32/cache:cold/bytes:*", "stream/triad/fp64/cache:cold/bytes:*"),
            ("GB/s", 1e9),
            "triaudit_hbm_bytes_per_second",
        ),
        Check(
            "gemm_bf16",
            "BF16 GEMM",
            "gpu",
            "flops",
            True,
            ("gemm/ceiling/bf16/burst", "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192"),
            ("TFLOP/s", 1e12),
            "triaudit_gemm_flops_per_second",
            {"precision": "bf16"},
        ),
        Check(
            "gemm_fp8",
            "FP8 (E4M3) GEMM",
            "gpu",
            "flops",
            True,
            ("gemm/ceiling/fp8e4m3/burst", "gemm/cublaslt/fp8e4m3/layout:tn/m:8192/n:8192/k:8192"),
            ("TFLOP/s", 1e12),
            "triaudit_gemm_flops_per_second",
            {"precision": "fp8e4m3"},
        ),
        Check(
            "h2d",
            "host to device, pinned",
            "gpu",
            "bytes_per_second",
            True,
            ("memcpy/h2d/pinned/bytes:*",),
            ("GB/s", 1e9),
            "triaudit_copy_bytes_per_second",
            {"direction": "h2d"},
        ),
        Check(
            "d2h",
            "device to host, pinned",
            "gpu",
            "bytes_per_second",
            True,
            ("memcpy/d2h/pinned/bytes:*",),
            ("GB/s", 1e9),
            "triaudit_copy_bytes_per_second",
            {"direction": "d2h"},
        ),
        Check(
            "d2d",
            "device to device, copy engine",
            "gpu",
            "bytes_per_second",
            True,
            ("memcpy/d2d/copy_engine/bytes:*",),
            ("GB/s", 1e9),
            "triaudit_copy_bytes_per_second",
            {"direction": "d2d"},
        ),
        Check(
            "launch",
            "kernel launch (eager enqueue)",
            "gpu",
            "time_s",
            False,
            ("launch/empty/enqueue/kernels:*",),
            ("µs", 1e-6),
            "triaudit_launch_seconds",
        ),
        Check(
            "p2p",
            "GPU to GPU, copy engine, one direction (slowest pair of each link type)",
            "node",
            "bytes_per_second",
            True,
            ("p2p/ce/uni/src:*/dst:*/bytes:*",),
            ("GB/s", 1e9),
            "triaudit_p2p_bytes_per_second",
        ),
        Check(
            "allreduce",
            "NCCL allreduce bus bandwidth, largest size",
            "node",
            "busbw",
            True,
            ("allreduce/out_of_place/fp32/algo:auto/bytes:*", "allreduce/out_of_place/fp32/algo:ring/bytes:*"),
            ("GB/s", 1e9),
            "triaudit_allreduce_bus_bytes_per_second",
        ),
    )
}

# The environment checks, read from the run's context (doctor's checks, as the run saw the GPU),
# and the health counters. They have no measured figure of their own in Prometheus: their verdict
# is triaudit_check_status.
ENVIRONMENT = {
    "pcie": "PCIe link generation and width",
    "nvlink": "NVLink links up",
    "ecc": "ECC mode",
    "clocks": "clocks and throttle reasons during the cases",
    "driver": "driver and CUDA versions",
    "power": "enforced power limit",
    "health": "ECC, row remapping, XID, NVLink and PCIe errors during the run",
}


def floor_key(check: str, link: str = "") -> str:
    """The key of a floor in a floors file: the check, and for p2p the link type (p2p:NV18)."""
    return f"{check}:{link}" if link else check


def split_floor_key(key: str) -> tuple[str, str]:
    check, _, link = key.partition(":")
    return check, link


def fmt(value: float | None, check: str) -> str:
    """A figure of `check` as people read it (GB/s, TFLOP/s, µs)."""
    if value is None or value != value:
        return "—"
    c = CHECKS.get(check)
    unit, scale = c.unit if c else ("", 1.0)
    x = value / scale
    digits = 0 if abs(x) >= 1000 else (1 if abs(x) >= 10 else 2)
    return f"{x:,.{digits}f} {unit}".strip()


# The health counters (per case; absent where NVML does not support one). Any increase of these
# during a run is a hardware fault: FAIL, whatever the floors say.
HEALTH_FATAL = {
    "health_ecc_uncorrected": "uncorrected ECC errors",
    "health_remapped_rows_uncorrectable": "rows remapped for uncorrectable errors",
    "health_remap_pending": "a row remap pending (needs a GPU reset)",
    "health_remap_failure": "a row remap failed",
    "health_retired_pages_dbe": "pages retired for double-bit errors",
    "health_nvlink_links_down": "NVLink links that went down during a case",
}
# These are judged against bands (warn, fail: counts over the run), from the floors file's
# [sku.health] or the policy default of judge/health.py.
HEALTH_BANDED = {
    "health_ecc_corrected": "corrected ECC errors",
    "health_remapped_rows_correctable": "rows remapped for correctable errors",
    "health_retired_pages_sbe": "pages retired for single-bit errors",
    "health_xid_events": "critical XID events (each also makes its case an error)",
    "health_nvlink_crc_errors": "NVLink CRC errors",
    "health_nvlink_replay_errors": "NVLink replays",
    "health_nvlink_recovery_errors": "NVLink recoveries",
    "health_pcie_replays": "PCIe replays",
}
HEALTH_ERROR_PREFIX = "health: "  # the message of a case during which a fatal health event occurred
