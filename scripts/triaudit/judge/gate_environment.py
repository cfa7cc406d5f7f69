"""The gate's environment checks: what `doctor` checks on a live machine, judged from what the run
recorded (each result's context, and the clock counters of its cases) against the GPU's SKU entry.

- pcie: the link's width below its maximum is a FAIL (doctor's problem: host copies get a share of
  their bandwidth), as is a maximum below the SKU's (a narrower or older slot). A generation below
  the maximum when an executable started is said, not judged: links train down at idle, and the
  pinned-copy checks measure what the link delivered under load.
- nvlink: fewer links up than the SKU's entry has (or than the node's other GPUs, when no entry
  says) is a FAIL: NVIDIA's own NVLink check tolerates no inactive link
  (https://docs.nvidia.com/health-validation/reference/checks/nvlink, max_inactive_nvlinks = 0).
- ecc: off where the SKU runs with it on is a FAIL; off where no entry says is a WARN (doctor's).
- clocks: a hardware or thermal slowdown or the power brake during a case is a FAIL; a mean busy
  clock below 75 % of the rated boost a WARN (the executables' own flags, per case).
- driver: a driver older than the CUDA runtime's major version is a FAIL (every call would fail),
  an older minor version a WARN; below the entry's driver_min a FAIL.
- power: an enforced limit below the entry's power_limit_w_min, or below the GPU's default, is a
  WARN (the GEMM floors may not hold at a lower limit; its own entry makes it expected).
Whatever the context does not say is NOT TESTED.
"""

from __future__ import annotations

import re

from triaudit.judge.floors import Sku
from triaudit.judge.gate_checks import FAIL, NOT_TESTED, PASS, WARN
from triaudit.judge.gate_facts import Gpu
from triaudit.judge.gate_rows import Clocks
from triaudit.judge.gate_verdict import Verdict


def _verdict(gpu: Gpu, sku: Sku | None, check: str, status: str, message: str, short: str = "") -> Verdict:
    return Verdict(
        gpu.host,
        gpu.index,
        gpu.uuid,
        gpu.model,
        check,
        status,
        message,
        sku=sku.label() if sku else "",
        floor_source=sku.label() if sku else "no floors entry for this GPU",
        short=short or message,
    )


def pcie(gpu: Gpu, sku: Sku | None, mismatches: dict) -> Verdict:
    f = gpu.facts
    gen, width, gen_now, width_now = (
        f.get("pcie_generation"),
        f.get("pcie_width"),
        f.get("pcie_generation_current"),
        f.get("pcie_width_current"),
    )
    if width is None or width_now is None or gen is None:
        return _verdict(gpu, sku, "pcie", NOT_TESTED, "PCIe link not recorded (NVML did not read it)")
    problems = []
    if width_now < width:
        problems.append(f"x{width_now} of x{width}: host copies get a share of their bandwidth (slot, riser, BIOS)")
    if "pcie_width" in mismatches:
        problems.append(f"x{width} maximum, {sku.name} expects x{mismatches['pcie_width'][0]}")
    if "pcie_generation" in mismatches and gen < mismatches["pcie_generation"][0]:
        problems.append(f"Gen{gen} maximum, {sku.name} expects Gen{mismatches['pcie_generation'][0]}")
    said = f"Gen{gen_now if gen_now is not None else '?'}/{gen} x{width_now}/{width}"
    if problems:
        return _verdict(gpu, sku, "pcie", FAIL, f"{said}: " + "; ".join(problems), f"PCIe {said}")
    idle = f" (Gen{gen_now} when an executable started: links train down at idle)" if gen_now and gen_now < gen else ""
    return _verdict(gpu, sku, "pcie", PASS, f"{said}{idle}")


def nvlink(gpu: Gpu, sku: Sku | None, siblings: list[Gpu]) -> Verdict:
    n = gpu.facts.get("nvlink_links")
    if n is None:
        return _verdict(gpu, sku, "nvlink", NOT_TESTED, "NVLink links not recorded (NVML did not read them)")
    expected = sku.match.get("nvlink_links") if sku else None
    if expected is not None:
        if n < expected:
            return _verdict(
                gpu, sku, "nvlink", FAIL, f"{n} of {expected} NVLinks up ({sku.name})", f"NVLink {n} < {expected} up"
            )
        if n > expected:
            return _verdict(gpu, sku, "nvlink", WARN, f"{n} NVLinks up, {sku.name} has {expected}: another topology")
        return _verdict(
            gpu, sku, "nvlink", PASS, f"{n} NVLinks up, as {sku.name} has" if n else "no NVLink, as expected"
        )
    others = [g.facts.get("nvlink_links") for g in siblings if g is not gpu and g.facts.get("nvlink_links") is not None]
    if not others:
        return _verdict(
            gpu,
            sku,
            "nvlink",
            NOT_TESTED,
            f"{n} NVLinks up; no floors entry says how many to expect, no sibling to compare",
        )
    most = max(others)
    if n < most:
        return _verdict(
            gpu, sku, "nvlink", FAIL, f"{n} NVLinks up, its siblings have {most}", f"NVLink {n} < {most} up"
        )
    return _verdict(gpu, sku, "nvlink", PASS, f"{n} NVLinks up, as its {len(others)} sibling(s)")


def ecc(gpu: Gpu, sku: Sku | None) -> Verdict:
    mode = gpu.facts.get("ecc", "unknown")
    expected = sku.expect.get("ecc") if sku else None
    if expected == "unsupported":
        if mode == "on":
            return _verdict(gpu, sku, "ecc", WARN, f"ECC on; {sku.name} has none: another SKU?")
        return _verdict(gpu, sku, "ecc", PASS, f"no ECC on {sku.name} (reported {mode})")
    if mode not in ("on", "off"):
        return _verdict(gpu, sku, "ecc", NOT_TESTED, f"ECC mode not recorded ({mode})")
    if expected == "on" and mode == "off":
        return _verdict(
            gpu, sku, "ecc", FAIL, f"ECC off; {sku.name} runs with it on (nvidia-smi -e 1, then a GPU reset)", "ECC off"
        )
    if expected == "off" and mode == "on":
        return _verdict(gpu, sku, "ecc", WARN, f"ECC on; {sku.name}'s floors are for ECC off")
    if expected is None and mode == "off":
        return _verdict(gpu, sku, "ecc", WARN, "ECC off (bandwidth figures are not comparable with ECC-on cards)")
    return _verdict(gpu, sku, "ecc", PASS, f"ECC {mode}")


def clocks(gpu: Gpu, sku: Sku | None, rows: Clocks | None) -> Verdict:
    """The verdict from the GPU's clock flags (gate_rows.py GateRows.clocks; None: no flag at all)."""
    if rows is None or rows.empty:
        return _verdict(gpu, sku, "clocks", NOT_TESTED, "no clock samples in the run's cases (NVML did not sample)")
    cases, throttled, low = rows.cases, rows.throttled, rows.low
    if throttled:
        return _verdict(
            gpu,
            sku,
            "clocks",
            FAIL,
            f"hardware or thermal slowdown or power brake in {len(throttled)} of {cases} case(s), e.g. {throttled[0]}",
            f"clocks throttled in {len(throttled)} case(s)",
        )
    if low:
        return _verdict(
            gpu,
            sku,
            "clocks",
            WARN,
            f"mean busy SM clock below 75 % of the rated boost in {len(low)} of {cases} case(s), e.g. {low[0]}",
        )
    return _verdict(gpu, sku, "clocks", PASS, f"no slowdown in {cases} case(s)")


def _version(text: str) -> tuple[int, ...] | None:
    parts = re.findall(r"\d+", text or "")
    return tuple(int(p) for p in parts) if parts else None


def driver(gpu: Gpu, sku: Sku | None) -> Verdict:
    f = gpu.facts
    drv, cuda_d, cuda_r = (
        f.get("driver_version", ""),
        f.get("cuda_driver_version", ""),
        f.get("cuda_runtime_version", ""),
    )
    d, r = _version(cuda_d)[:2] if _version(cuda_d) else None, _version(cuda_r)[:2] if _version(cuda_r) else None
    if not _version(drv) or d is None or r is None or drv.startswith("unknown"):
        return _verdict(gpu, sku, "driver", NOT_TESTED, f"driver or CUDA versions not recorded ({drv or '?'})")
    said = f"driver {drv} (CUDA {cuda_d}), runtime {cuda_r}"
    minimum = sku.expect.get("driver_min") if sku else None
    if minimum and _version(drv) < _version(str(minimum)):
        return _verdict(gpu, sku, "driver", FAIL, f"{said}: below {sku.name}'s driver_min {minimum}", f"driver {drv}")
    if d[0] < r[0]:
        return _verdict(gpu, sku, "driver", FAIL, f"{said}: the driver is too old for this CUDA major version")
    if d < r:
        return _verdict(gpu, sku, "driver", WARN, f"{said}: minor-version compatibility (PTX JIT of newer PTX fails)")
    return _verdict(gpu, sku, "driver", PASS, said)


def power(gpu: Gpu, sku: Sku | None, mismatches: dict) -> Verdict:
    limit, default = gpu.facts.get("power_limit_w"), gpu.facts.get("power_limit_default_w")
    if limit is None:
        return _verdict(gpu, sku, "power", NOT_TESTED, "enforced power limit not recorded (NVML did not read it)")
    if "power_limit_w_min" in mismatches:
        need = mismatches["power_limit_w_min"][0]
        return _verdict(
            gpu, sku, "power", WARN, f"enforced limit {limit:g} W; {sku.name}'s floors are for at least {need:g} W"
        )
    if default and limit < 0.99 * default:
        return _verdict(gpu, sku, "power", WARN, f"enforced limit {limit:g} W, below its default {default:g} W")
    return _verdict(gpu, sku, "power", PASS, f"enforced limit {limit:g} W" + (f" of {default:g} W" if default else ""))


def environment(gpu: Gpu, sku: Sku | None, mismatches: dict, rows: Clocks | None, siblings: list[Gpu]) -> list[Verdict]:
    return [
        pcie(gpu, sku, mismatches),
        nvlink(gpu, sku, siblings),
        ecc(gpu, sku),
        clocks(gpu, sku, rows),
        driver(gpu, sku),
        power(gpu, sku, mismatches),
    ]
