"""Synthetic result files with the energy counters and burst/sustained cases the executables write
(benchmarks/common/measure.cpp report_loop/report_sustained, energy.cpp): made-up numbers in the
exact shape, not measurements. Files made from here have "synthetic" in their names (synthetic.write).

energy: "valid"      every repetition has joules_per_op, watts_mean and the corner's efficiency counter
        "first_short" the first repetition's window is under 1 s (label: energy_window_too_short), the rest valid
        "too_short"  every repetition's window is under 1 s
        "unsupported" the board has no counter: label and context say unknown (NVML: NOT_SUPPORTED)
"""

from __future__ import annotations

from synthetic import synthetic_context

GEMM_FLOPS = 2 * 8192**3
TRIAD_BYTES = 2**30  # per array; triad moves 3 arrays


def energy_context(card: str, limit_w: int = 700, default_w: int = 700, energy: str = "valid") -> dict:
    ctx = synthetic_context(card)
    ctx.update(
        {
            "power_limit_enforced_w": str(limit_w),
            "power_limit_default_w": str(default_w),
            "temperature_start_c": "34",
            "energy_counter": "unknown (NVML: NOT_SUPPORTED)"
            if energy == "unsupported"
            else "nvmlDeviceGetTotalEnergyConsumption",
        }
    )
    return ctx


def _entry(name: str, seconds: float, rep: int, reps: int, label: str, counters: dict) -> dict:
    return {
        "name": name + "/manual_time",
        "run_name": name + "/manual_time",
        "run_type": "iteration",
        "repetitions": reps,
        "repetition_index": rep,
        "threads": 1,
        "iterations": 1,
        "real_time": seconds * 1e6,
        "cpu_time": 1.0,
        "time_unit": "us",
        "label": label,
        **counters,
    }


def _energy(
    rep: int, energy: str, window_s: float, watts: float, seconds_per_op: float, work: float, efficiency: str
) -> tuple[dict, str]:
    """The counters report_loop writes for one repetition, and the label part."""
    short = energy == "too_short" or (energy == "first_short" and rep == 0)
    if energy == "unsupported":
        return {"energy_window_s": 0.0}, "energy unknown (NVML: NOT_SUPPORTED)"
    if short:
        w = 0.4 * (rep + 1)
        return {"energy_window_s": w}, f"energy energy_window_too_short ({w:.2f} s measured, 1.0 s needed)"
    joules = watts * seconds_per_op
    return {
        "energy_window_s": window_s * (rep + 1),
        "joules_per_op": joules,
        "watts_mean": watts,
        efficiency: work / joules,
    }, ""


def synthetic_energy_result(
    card: str,
    gemm: dict | None = None,
    triad: tuple = (3.3e12, 520.0),
    sustained: float = 0.92,
    energy: str = "valid",
    reps: int = 3,
    limit_w: int = 700,
    default_w: int = 700,
    clock_mhz: float = 1980.0,
    samples: float = 1.02,
) -> dict:
    """GEMM ceilings (burst and sustained) per precision {name: (FLOP/s, watts)} and STREAM FP32
    triad at 1 GiB per array (burst: the cold case; sustained) at (bytes/s, watts). Sustained
    figures are `sustained` x the burst rate, at 97 % of the burst power, 8 % lower clock and a
    hotter board. GEMM power samples read `samples` x the counter's mean."""
    gemm = gemm if gemm is not None else {"bf16": (760e12, 690.0), "int8": (1500e12, 680.0)}
    b = []
    for rep in range(reps):
        for mode in ("burst", "sustained"):
            hold = mode == "sustained"
            f = sustained if hold else 1.0
            extra = {"window_s": 2.0, "sustained_elapsed_s": 2.0 * (rep + 1)} if hold else {}
            clocks = {
                "sm_clock_mean_mhz": clock_mhz * (0.92 if hold else 1.0),
                "sm_clock_min_mhz": clock_mhz * 0.9,
                "temperature_start_c": 40.0 + (10 if hold else 0),
                "temperature_end_c": 48.0 + (20 if hold else 0),
            }
            for prec, (rate, watts) in gemm.items():
                r = rate * f
                t = GEMM_FLOPS / r
                w = watts * (0.97 if hold else 1.0)
                e, why = _energy(rep, energy, 1.4, w, t, GEMM_FLOPS, "flops_per_joule")
                label = "; ".join(
                    x
                    for x in (
                        "sustained: median over the window"
                        if hold
                        else "burst: the best of 12 shapes, m:8192 n:8192 k:8192",
                        why,
                    )
                    if x
                )
                b.append(
                    _entry(
                        f"gemm/ceiling/{prec}/{mode}",
                        t,
                        rep,
                        reps,
                        label,
                        {
                            ("ops" if prec == "int8" else "flops"): r,
                            "m": 8192.0,
                            "n": 8192.0,
                            "k": 8192.0,
                            "arithmetic_intensity": 8192 / 3 * (2 if prec == "int8" else 1),
                            "power_samples_mean_w": w * samples,
                            "power_samples_max_w": w * 1.1,
                            **clocks,
                            **extra,
                            **e,
                        },
                    )
                )
            if not hold:  # the cuBLASLt case at 8192³ every GEMM run has beside its ceilings
                for prec, (rate, watts) in gemm.items():
                    t = GEMM_FLOPS / (rate * 0.97)
                    e, why = _energy(rep, energy, 1.1, watts, t, GEMM_FLOPS, "flops_per_joule")
                    b.append(
                        _entry(
                            f"gemm/cublaslt/{prec}/layout:tn/m:8192/n:8192/k:8192",
                            t,
                            rep,
                            reps,
                            why,
                            {
                                ("ops" if prec == "int8" else "flops"): GEMM_FLOPS / t,
                                "algo_id": 6.0,
                                "arithmetic_intensity": 8192 / 3 * (2 if prec == "int8" else 1),
                                **clocks,
                                **e,
                            },
                        )
                    )
            rate, watts = triad
            r = rate * f
            moved = 3 * TRIAD_BYTES
            t = moved / r
            w = watts * (0.97 if hold else 1.0)
            e, why = _energy(rep, energy, 1.2, w, t, moved, "bytes_per_joule")
            label = "; ".join(x for x in ("sustained: median over the window" if hold else "", why) if x)
            op = "triad_sustained" if hold else "triad"
            b.append(
                _entry(
                    f"stream/{op}/fp32/cache:cold/bytes:{TRIAD_BYTES}",
                    t,
                    rep,
                    reps,
                    label,
                    {
                        "bytes_per_second": r,
                        "bytes_per_op": float(moved),
                        "working_set_bytes": float(moved),
                        "peak_fraction": r / 4.0e12,
                        "power_samples_mean_w": w * 0.99,
                        "power_samples_max_w": w * 1.05,
                        **clocks,
                        **extra,
                        **e,
                    },
                )
            )
    return {"context": energy_context(card, limit_w, default_w, energy), "benchmarks": b}
