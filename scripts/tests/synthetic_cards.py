"""Synthetic run folders of whole cards for the report's tests: every case of the executables'
catalogue, with figures from a simple model of each card's datasheet (core/specs.py) so the pages
look like real ones (STREAM near 88 % of HBM, BF16 GEMM near 80 % of peak, pinned copies near
85 % of the PCIe link, NVLink allreduce, launch costs in microseconds). NOT MEASUREMENTS: the
files' names say "synthetic" and so does their context.

    write_cards(out, ["h200", "a100-sxm-80"], catalogue)   # one run folder per card
"""

from __future__ import annotations

import json
import math
import random
import subprocess
from pathlib import Path
from typing import Callable

from triaudit.core.specs import CardSpec, card_by_key
from triaudit.report.frames import SPEC_PRECISION

EXECUTABLES = ("stream", "gemm", "memcpy", "launch", "allreduce")
# The CUDA device name each card key is reported under.
DEVICE_NAME = {
    "h200": "NVIDIA H200",
    "h100-sxm": "NVIDIA H100 80GB HBM3",
    "a100-sxm-80": "NVIDIA A100-SXM4-80GB",
    "l40s": "NVIDIA L40S",
    "rtx-4090": "NVIDIA GeForce RTX 4090",
}
# More cards for the pages of eight (the browser test): kept apart so the sets above stay as they were.
MORE_DEVICE_NAMES = {
    "a100-sxm-40": "NVIDIA A100-SXM4-40GB",
    "a100-pcie-80": "NVIDIA A100 80GB PCIe",
    "h100-pcie": "NVIDIA H100 PCIe",
}
EIGHT_CARDS = ["a100-sxm-80", "a100-sxm-40", "a100-pcie-80", "h100-sxm", "h100-pcie", "h200", "l40s", "rtx-4090"]


def device_name(key: str) -> str:
    return DEVICE_NAME.get(key) or MORE_DEVICE_NAMES[key]


_PRECISION = SPEC_PRECISION  # the datasheet column each GEMM precision is modelled on
_LADDER = {"l0": 0.02, "l1": 0.12, "l2": 0.35, "l3": 0.62, "l4": 0.74, "l5": 0.88}


def catalogue(build_dir: Path) -> dict[str, list[str]]:
    """The case names of each executable, from its own --benchmark_list_tests."""
    out = {}
    for exe in EXECUTABLES:
        path = build_dir / "benchmarks" / exe / f"triaudit_{exe}"
        names = subprocess.run([str(path), "--benchmark_list_tests"], capture_output=True, text=True, timeout=60)
        out[exe] = [n.removesuffix("/manual_time") for n in names.stdout.split()]
    return out


def _args(case: str) -> dict[str, str]:
    return dict(p.split(":", 1) for p in case.split("/")[3:] if ":" in p)


def _cc(spec: CardSpec) -> float:
    return float(spec.compute_capability)


def _model(case: str, spec: CardSpec) -> tuple[float, dict[str, float], float] | str | None:
    """(seconds per op, throughput counters, watts) of a case on the card; a string: the case is
    skipped with that reason; None: not modelled (left out)."""
    parts = case.split("/")
    corner, op, variant = parts[0], parts[1], parts[2]
    a = _args(case)
    nbytes = float(a.get("bytes", "0").split("-")[0] or 0)
    hbm = spec.mem_bw_gbps * 1e9
    if corner == "stream":
        arrays = 3 if op.startswith(("add", "triad")) else 2
        ws = arrays * nbytes
        in_l2 = ws <= spec.l2_mb * 1e6 * 0.8 and a.get("cache") == "hot"
        bw = (2.6 if in_l2 else 0.88) * hbm
        t = 2.5e-6 + ws / bw
        c = {"bytes_per_second": ws / t, "working_set_bytes": ws}
        if ws > spec.l2_mb * 1e6:
            c["peak_fraction"] = ws / t / hbm
        return t, c, 420.0 if not in_l2 else 300.0
    if corner == "gemm":
        if op == "ceiling":
            prec = variant
            m = n = k = 8192.0
        elif op.startswith("ladder_"):
            prec = variant
            m, n, k = (float(a[x]) for x in "mnk")
            level = op.split("_")[1]
            if level in ("l4", "l5") and _cc(spec) != 9.0:
                return "wgmma and TMA need compute capability 9.0 (Hopper)"
        else:
            prec = variant
            if "llm" in a:
                tokens = float(a["tokens"])
                m, n, k = 4096.0 * 3, tokens, 4096.0
            else:
                m, n, k = (float(a[x]) for x in "mnk")
        key = _PRECISION.get(prec)
        if key is None:
            return None
        if key == "fp8" and _cc(spec) < 8.9:
            return "FP8 needs compute capability 8.9 or newer"
        peak = spec.tflops.get(key) or spec.tflops.get("fp64", 0)
        if not peak:
            return None
        flop = 2 * m * n * k
        size = (m * n * k) ** (1 / 3)
        eff = 0.82 * min(1.0, size / 4096) ** 0.35
        if op == "ceiling":
            eff = 0.84 if parts[3] == "burst" else 0.76
        if op.startswith("ladder_"):
            eff *= _LADDER[op.split("_")[1]]
        elem = 1 if key in ("fp8", "int8") else (8 if key.startswith("fp64") else (4 if key in ("fp32", "tf32") else 2))
        moved = (m * k + k * n + m * n) * elem
        t = max(flop / (peak * 1e12 * eff), moved / (0.85 * hbm)) + 4e-6
        c = {"ops" if key == "int8" else "flops": flop / t, "arithmetic_intensity": flop / moved}
        if op == "ceiling" and parts[3] == "burst":
            c.update(best_m=m, best_n=n, best_k=k, flops_best_region=flop / (t * 0.99))
        if op.startswith("ladder_"):
            c["ratio_to_cublas"] = _LADDER[op.split("_")[1]]
        return t, c, spec.tdp_w * (0.95 if op == "ceiling" else 0.8)
    if corner == "memcpy":
        link = spec.pcie_gbps_per_direction * 1e9
        if op == "overlap":
            return (
                2e-3,
                {"hidden_fraction": 0.96 if variant == "pinned" else 0.08, "serial_s": 4e-3, "overlapped_s": 2.1e-3},
                150.0,
            )
        if op == "d2d":
            bw = 0.46 * hbm if variant == "copy_engine" else 0.44 * hbm
            t = 6e-6 + nbytes / bw
        elif variant == "pageable":
            t = 20e-6 + nbytes / (0.42 * link)
        elif variant == "zero_copy":
            t = 4e-6 + nbytes / (0.7 * link)
        else:
            t = 8e-6 + nbytes / (0.86 * link)
        c = {"bytes_per_second": nbytes / t, "bytes_per_second_median": nbytes / t}
        if op == "bidir":
            c.update(bytes_per_second_h2d=nbytes / t * 0.94, bytes_per_second_d2h=nbytes / t * 0.92)
            c["bytes_per_second_total"] = c["bytes_per_second_h2d"] + c["bytes_per_second_d2h"]
        return t, c, 110.0
    if corner == "launch":
        kernels = float(a.get("kernels", "1").split("-")[0])
        if op == "chain_fit":
            per = 2.4e-6 if variant == "eager" else 0.75e-6
            return per, {"per_kernel_s": per, "fixed_s": 6e-6, "fit_r2": 0.999}, 90.0
        if op == "chain":
            per = (2.4e-6 if variant == "eager" else 0.75e-6) + 6e-6 / kernels
            return per, {"per_kernel_s": per}, 90.0
        if op == "fusion":
            steps = float(a["steps"])
            t = (steps if variant == "unfused" else 1) * (3e-6 + 2 * nbytes / (0.85 * hbm))
            return t, {}, 200.0
        return {"enqueue": 2.3e-6, "round_trip": 6.5e-6}.get(variant, 1.8e-6), {}, 80.0
    if corner == "allreduce":
        ranks = float(a.get("gpus", "8"))
        if ranks < 2:
            ranks = 1.0
        link = (spec.nvlink_gbps / 2 if spec.nvlink_gbps else spec.pcie_gbps_per_direction) * 1e9
        factor = 2 * (ranks - 1) / ranks
        bus = (0.8 if a.get("algo") == "auto" and spec.nvlink_gbps else 0.7) * link
        t = 18e-6 + (nbytes * factor / bus if ranks > 1 else nbytes / (0.8 * hbm))
        c = {"algbw": nbytes / t, "busbw": nbytes * factor / t, "ranks": ranks, "gpus": ranks}
        c["busbw_host_timed"] = nbytes * factor / (t + 6e-6)
        return t, c, 320.0
    return None


RATES = ("bytes_per_second", "flops", "ops", "algbw", "busbw")  # counters that scale as 1 / time


def _entry(case: str, t: float, counters: dict, watts: float, rep: int, reps: int, rng: random.Random) -> dict:
    j = 1 + 0.004 * (rng.random() - 0.5)
    tt = t * j
    e = {
        "name": case + "/manual_time",
        "run_name": case + "/manual_time",
        "run_type": "iteration",
        "repetitions": reps,
        "repetition_index": rep,
        "threads": 1,
        "iterations": 1,
        "real_time": tt * 1e6,
        "cpu_time": tt * 1e6,
        "time_unit": "us",
        "regions": 20.0,
        "ops_per_region": 1.0,
        "seconds_per_op": tt,
        "seconds_per_op_median": tt,
        "seconds_per_op_best": tt * 0.995,
        "noise": 0.003,
        "warmup_s": 0.2,
        "sm_clock_mean_mhz": 1960.0 - 40 * rng.random(),
        "sm_clock_min_mhz": 1900.0 - 40 * rng.random(),
        "clock_low": 0.0,
        "throttled": 0.0,
        "sw_power_cap_fraction": 0.0,
        "temperature_start_c": 41.0 + rep,
        "temperature_end_c": 55.0 + rep,
        "energy_window_s": 1.6,
        "joules_per_op": tt * watts,
        "watts_mean": watts,
        "power_samples_mean_w": watts * 1.01,
        "power_samples_max_w": watts * 1.08,
    }
    for k, v in counters.items():
        e[k] = v / j if k.startswith(RATES) else v
    rate = next((counters[k] for k in ("flops", "ops", "busbw", "bytes_per_second") if k in counters), None)
    if rate:
        key = {"flops": "flops_per_joule", "ops": "flops_per_joule", "busbw": "busbw_per_watt"}.get(
            next(k for k in ("flops", "ops", "busbw", "bytes_per_second") if k in counters), "bytes_per_joule"
        )
        e[key] = rate / j / watts
    parts = case.split("/")
    if "sustained" in parts or parts[1].endswith("_sustained"):
        e.update(window_s=2.0, sustained_elapsed_s=2.2 * (rep + 1))
    return e


def _p2p(card: str, spec: CardSpec, n: int, reps: int, rng: random.Random) -> dict:
    """triaudit_p2p's copy-engine matrix at one size: NVLink pairs near 80 % of one direction of the
    datasheet's NVLink (PCIe when the card has none); GPU 0 -> 1 runs at 60 % of the rest (a slow
    pair, so the slowest and the fastest pair of a link type differ)."""
    link = f"NV{int(spec.nvlink_gbps // 50)}" if spec.nvlink_gbps else "PHB"
    per_dir = (spec.nvlink_gbps / 2 if spec.nvlink_gbps else spec.pcie_gbps_per_direction) * 1e9
    ctx = _context(card, spec, "p2p")
    ctx["p2p_gpu_count"] = str(n)
    bench = []
    size = 512 * 2**20
    for i in range(n):
        ctx[f"gpu_{i}_name"] = card
        for j in range(n):
            if i == j:
                continue
            ctx[f"p2p_link_{i}_{j}"] = link
            ctx[f"p2p_access_{i}_{j}"] = "yes"
            bw = 0.8 * per_dir * (0.6 if (i, j) == (0, 1) else 1.0)
            case = f"p2p/ce/uni/src:{i}/dst:{j}/bytes:{size}"
            bench += [_entry(case, size / bw, {"bytes_per_second": bw}, 300.0, r, reps, rng) for r in range(reps)]
    return {"context": ctx, "benchmarks": bench}


def _context(card: str, spec: CardSpec, exe: str) -> dict:
    return {
        "date": "2026-01-01T00:00:00+00:00",
        "host_name": "synthetic-host",
        "executable": f"triaudit_{exe}",
        "library_build_type": "release",
        "gpu_available": "true",
        "gpu_name": card,
        "gpu_uuid": f"GPU-synthetic-{spec.key}",
        "compute_capability": spec.compute_capability,
        "l2_bytes": str(int(spec.l2_mb * 1e6)),
        "peak_memory_bandwidth_bytes_per_second": f"{spec.mem_bw_gbps * 1e9:.0f}",
        "power_limit_enforced_w": str(spec.tdp_w),
        "power_limit_default_w": str(spec.tdp_w),
        "temperature_start_c": "41",
        "energy_counter": "nvmlDeviceGetTotalEnergyConsumption",
        "health_counters": "ecc_corrected: ok; ecc_uncorrected: ok; pcie_replays: ok; xid_events: ok",
        "triaudit_schema_version": "1",
        "synthetic": "true (test fixture, not a measurement)",
        "triaudit_provenance": "synthetic",
    }


def write_cards(
    out: Path,
    keys: list[str],
    names: dict[str, list[str]],
    reps: int = 5,
    leave_out=(),
    p2p_gpus: int = 0,
    *,
    stamp: str = "20260101T000000Z",
    slower: Callable[[str], float] | None = None,
    seed: int = 7,
) -> list[Path]:
    """One run folder per card under out/<card>/<stamp>-synthetic/; `leave_out`: corners
    (executables, "p2p" too) not written for the LAST card (a corner missing for one card);
    `p2p_gpus` > 1: also a GPU-to-GPU copy matrix of that many GPUs (_p2p); `slower(case)`: a
    factor on the case's time (1.09: 9 % slower), for a series of nights (synthetic_series.py)."""
    rng = random.Random(seed)
    folders = []
    for i, key in enumerate(keys):
        spec = card_by_key(key)
        card = device_name(key)
        run = out / card.lower().replace(" ", "-") / f"{stamp}-synthetic"
        run.mkdir(parents=True, exist_ok=True)
        for exe, cases in names.items():
            if i == len(keys) - 1 and exe in leave_out:
                continue
            bench = []
            for case in cases:
                m = _model(case, spec)
                if m is None:
                    continue
                if isinstance(m, str):
                    bench.append(
                        {
                            "name": case + "/manual_time",
                            "run_name": case + "/manual_time",
                            "run_type": "iteration",
                            "repetitions": reps,
                            "repetition_index": 0,
                            "error_occurred": True,
                            "error_message": "skipped: " + m,
                            "iterations": 0,
                            "real_time": 0,
                            "cpu_time": 0,
                            "time_unit": "us",
                        }
                    )
                    continue
                t, counters, watts = m
                if not math.isfinite(t) or t <= 0:
                    continue
                if slower is not None:
                    f = slower(case)
                    t *= f
                    counters = {k: v / f if k.startswith(RATES) else v for k, v in counters.items()}
                bench += [_entry(case, t, counters, watts, r, reps, rng) for r in range(reps)]
            (run / f"triaudit_{exe}_synthetic.json").write_text(
                json.dumps({"context": _context(card, spec, exe), "benchmarks": bench})
            )
        if p2p_gpus > 1 and not (i == len(keys) - 1 and "p2p" in leave_out):
            (run / "triaudit_p2p_synthetic.json").write_text(json.dumps(_p2p(card, spec, p2p_gpus, reps, rng)))
        (run / "manifest.json").write_text(
            json.dumps({"profile": "full", "complete": True, "started_utc": stamp, "host": "synthetic-host"})
        )
        folders.append(run)
    return folders
