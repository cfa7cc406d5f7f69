"""Synthetic Google Benchmark JSON for tests: made-up numbers in the exact shape the executables
write. Not measurements; every file made from here has "synthetic" in its name and its
context says so.
"""

from __future__ import annotations

import json
from pathlib import Path


def synthetic_context(card: str, l2_bytes: int = 50 * 2**20, peak: float = 4.0e12) -> dict:
    return {
        "date": "2026-01-01T00:00:00+00:00",
        "host_name": "synthetic-host",
        "executable": "triaudit_stream",
        "gpu_available": "true",
        "gpu_name": card,
        "l2_bytes": str(l2_bytes),
        "peak_memory_bandwidth_bytes_per_second": f"{peak:.0f}",
        "synthetic": "true (test fixture, not a measurement)",
        "triaudit_provenance": "synthetic",
    }


def stream_run(op: str, typ: str, cache: str, nbytes: int, gbps: float, rep: int, reps: int, peak: float) -> dict:
    arrays = 3 if op in ("add", "triad") else 2
    name = f"stream/{op}/{typ}/cache:{cache}/bytes:{nbytes}/manual_time"
    moved = arrays * nbytes
    seconds = moved / (gbps * 1e9)
    return {
        "name": name,
        "family_index": 0,
        "per_family_instance_index": 0,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": reps,
        "repetition_index": rep,
        "threads": 1,
        "iterations": 100,
        "real_time": seconds * 1e6,
        "cpu_time": 5.0,
        "time_unit": "us",
        "bytes_per_op": float(moved),
        "bytes_per_second": gbps * 1e9,
        "ops_per_region": 1.0,
        "peak_fraction": gbps * 1e9 / peak,
        "working_set_bytes": float(moved),
    }


def synthetic_stream_result(
    card: str,
    hbm_gbps: float,
    l2_bytes: int = 50 * 2**20,
    peak: float = 4.0e12,
    sizes=(2**20, 2**24, 2**28),
    reps: int = 3,
    ops=("copy", "triad"),
    jitter: float = 0.01,
    skipped: tuple[str, ...] = (),
) -> dict:
    """Bandwidth = hbm_gbps beyond the L2, 3x that inside it; repetitions spread by `jitter`."""
    benchmarks = []
    for op in ops:
        for typ in ("fp32", "fp64"):
            for cache in ("hot", "cold"):
                for n in sizes:
                    arrays = 3 if op in ("add", "triad") else 2
                    base = hbm_gbps * (3 if arrays * n <= l2_bytes and cache == "hot" else 1)
                    for r in range(reps):
                        benchmarks.append(
                            stream_run(op, typ, cache, n, base * (1 + jitter * (r - (reps - 1) / 2)), r, reps, peak)
                        )
    for name in skipped:
        benchmarks.append(skipped_entry(name, "needs 3 GiB of device memory, 1 GiB free of 8 GiB"))
    return {"context": synthetic_context(card, l2_bytes, peak), "benchmarks": benchmarks}


def skipped_entry(name: str, why: str) -> dict:
    """A case the suite skipped, as Google Benchmark 1.7 writes it (error_occurred, "skipped: ...")."""
    return {
        "name": name + "/manual_time",
        "run_name": name + "/manual_time",
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "threads": 1,
        "iterations": 0,
        "real_time": 0.0,
        "cpu_time": 0.0,
        "time_unit": "us",
        "error_occurred": True,
        "error_message": f"skipped: {why}",
    }


def write(path: Path, data: dict) -> Path:
    assert "synthetic" in path.name, "synthetic fixtures must say so in their names"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def _entry(name: str, seconds: float, rep: int, reps: int, **counters) -> dict:
    return {
        "name": name + "/manual_time",
        "run_name": name + "/manual_time",
        "run_type": "iteration",
        "repetitions": reps,
        "repetition_index": rep,
        "threads": 1,
        "iterations": 10,
        "real_time": seconds * 1e6,
        "cpu_time": 1.0,
        "time_unit": "us",
        **counters,
    }


def synthetic_corners_result(card: str, scale: float = 1.0, reps: int = 5, jitter: float = 0.005) -> dict:
    """GEMM, copies, launch and allreduce cases of one card; throughput x `scale`."""
    b = []
    for r in range(reps):
        j = 1 + jitter * (r - reps // 2)
        for prec, tflops in (("bf16", 780), ("fp8e4m3", 1400), ("tf32", 380), ("fp64", 55)):
            f = 2 * 8192**3
            t = f / (tflops * 1e12 * scale * j)
            b.append(
                _entry(
                    f"gemm/cublaslt/{prec}/layout:tn/m:8192/n:8192/k:8192",
                    t,
                    r,
                    reps,
                    flops=f / t,
                    arithmetic_intensity=1365.3 * (2 if prec == "fp8e4m3" else 1),
                )
            )
            b.append(_entry(f"gemm/ceiling/{prec}/shapes:12", t * 0.98, r, reps, flops=f / (t * 0.98)))
        for lvl, ratio in ((0, 0.02), (3, 0.55)):
            t = 2 * 4096**3 / (780e12 * ratio * scale * j)
            typ = "fp32" if lvl == 0 else "bf16"
            b.append(
                _entry(
                    f"gemm/ladder_l{lvl}_x/{typ}/layout:tn/m:4096/n:4096/k:4096",
                    t,
                    r,
                    reps,
                    flops=2 * 4096**3 / t,
                    ratio_to_cublas=ratio,
                )
            )
        for op, kind, gbps in (
            ("h2d", "pinned", 55),
            ("h2d", "pageable", 20),
            ("d2h", "pinned", 54),
            ("d2d", "copy_engine", 2100),
        ):
            for size in (4096, 1 << 30):
                g = gbps * (0.05 if size == 4096 else 1) * scale * j
                b.append(
                    _entry(
                        f"memcpy/{op}/{kind}/bytes:{size}",
                        size / (g * 1e9),
                        r,
                        reps,
                        bytes_per_second=g * 1e9,
                        seconds_per_op=size / (g * 1e9),
                    )
                )
        b.append(_entry("memcpy/overlap/pinned/bytes:268435456", 0.005, r, reps, hidden_fraction=0.97))
        for n in (1, 10, 100, 1000):
            for variant, per in (("eager", 2.5e-6), ("graph", 0.6e-6)):
                t = (4e-6 + per * n) / (scale * j)
                b.append(_entry(f"launch/chain/{variant}/kernels:{n}", t, r, reps, per_kernel_s=t / n))
        b.append(_entry("launch/empty/enqueue/kernels:512", 2.2e-6 / scale, r, reps))
        for size in (8, 1 << 30):
            t = (size / 300e9 + 20e-6) / (scale * j)
            b.append(
                _entry(
                    f"allreduce/out_of_place/bf16/bytes:{size}",
                    t,
                    r,
                    reps,
                    algbw=size / t,
                    busbw=size / t * 1.75,
                    ranks=8,
                )
            )
    return {"context": synthetic_context(card), "benchmarks": b}
