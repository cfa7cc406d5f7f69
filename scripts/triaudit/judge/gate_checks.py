"""What `triaudit gate` measures a GPU on: the performance checks the corners declare (each
corner's module of corners/: the counter it reads, its direction, its unit, its headline figure
whose sources are the cases `floors derive` looks for), the environment checks and the health
counters. Standard library only (the floors loader and the command's parser read it).

A floor names the exact case it holds (a fleet's floors are derived from the case its runs had).
"""

from __future__ import annotations

from triaudit import corners as registry
from triaudit.corners.base import Check

__all__ = ["Check", "CHECKS"]

PASS, WARN, FAIL, NOT_TESTED = "PASS", "WARN", "FAIL", "NOT TESTED"
STATUSES = (PASS, WARN, FAIL, NOT_TESTED)

CHECKS: dict[str, Check] = registry.checks()
NODE_CHECKS = [c for c in CHECKS.values() if c.scope == "node"]

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
