"""The gate's health check: what the GPU's error counters did during the run.

Each case carries `health_*` counters (deltas over the case; absent where NVML does not support
one), and a case during which an uncorrected ECC error, a pending or failed row remap or a
critical XID occurred is an error whose message starts with "health: ". FAIL on any of those, or on
any increase of a fatal counter (gate_checks.HEALTH_FATAL). The others (corrected ECC, replays,
NVLink errors, non-critical XIDs) are summed over the run (each case's largest repetition) and
held against bands: the SKU entry's [sku.health], else POLICY. NOT TESTED when the run has no
health counter at all (executables built before they were recorded, or no NVML).
"""

from __future__ import annotations

from triaudit.judge.floors import Band, Sku
from triaudit.judge.gate_checks import FAIL, HEALTH_BANDED, HEALTH_FATAL, NOT_TESTED, PASS, WARN
from triaudit.judge.gate_facts import Gpu
from triaudit.judge.gate_rows import Health
from triaudit.judge.gate_verdict import Verdict

POLICY_BASIS = (
    "any event during a benchmark run is worth a look: WARN from the first; no published per-run threshold "
    "is adopted for a FAIL (GCM's NVLink check tolerates 0 CRC, replay and recovery errors by default: "
    "https://facebookresearch.github.io/gcm/docs/GCM_Health_Checks/health_checks/check-dcgmi/nvlink); "
    "set fail bands for your fleet in [sku.health]"
)
POLICY = {c: Band(1.0, None, {"kind": "policy", "basis": POLICY_BASIS}) for c in HEALTH_BANDED}


def health(gpu: Gpu, sku: Sku | None, rows: Health | None) -> Verdict:
    """The verdict from the GPU's health rows, summed up (gate_rows.py GateRows.health; None: none)."""

    def verdict(status: str, message: str, short: str = "", counts: dict | None = None) -> Verdict:
        v = Verdict(gpu.host, gpu.index, gpu.uuid, gpu.model, "health", status, message, short=short or message)
        v.sku = sku.label() if sku else ""
        v.floor_source = "health bands: " + ("the SKU entry's, else " if sku and sku.health else "") + "policy"
        v.counts = counts or {}
        return v

    if rows is None or (not rows.counted and not rows.errored):
        return verdict(NOT_TESTED, "no health counter in the run's cases")
    # A case's counter per repetition is that repetition's delta: its largest is a lower bound of
    # the case's total, exact when the events fell in one repetition (summed in gate_rows.py).
    counts = dict(rows.counts)
    cases = rows.cases
    fatal = [f"{HEALTH_FATAL[c]}: {counts[c]:g}" for c in HEALTH_FATAL if counts.get(c, 0) > 0]
    if rows.errored:
        case, message = rows.first_error
        fatal.insert(0, f"{rows.errored} case(s) ended by a health event, e.g. {case}: {message}")
    if fatal:
        return verdict(FAIL, "; ".join(fatal), "health: " + fatal[0].split(":")[0], counts)
    fails, warns = [], []
    for c, what in HEALTH_BANDED.items():
        n = counts.get(c, 0.0)
        band = (sku.health.get(c) if sku else None) or POLICY[c]
        if band.fail is not None and n >= band.fail:
            fails.append(f"{what}: {n:g} (FAIL from {band.fail:g})")
        elif band.warn is not None and n >= band.warn and n > 0:
            warns.append(f"{what}: {n:g} (WARN from {band.warn:g})")
    if fails:
        return verdict(FAIL, "; ".join(fails + warns), "health: " + fails[0], counts)
    if warns:
        return verdict(WARN, "; ".join(warns), counts=counts)
    return verdict(PASS, f"{len(counts)} health counter(s) over {cases} case(s), none moved", counts=counts)
