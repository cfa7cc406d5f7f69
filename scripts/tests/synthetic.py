"""Synthetic Google Benchmark JSON for tests: made-up numbers in the exact shape the executables
write. Not measurements; every file made from here has "synthetic" in its name and its
context says so.
"""
from __future__ import annotations

import json
from pathlib import Path


def synthetic_context(card: str, l2_bytes: int = 50 * 2**20, peak: float = 4.0e12) -> dict:
    return {"date": "2026-01-01T00:00:00+00:00", "host_name": "synthetic-host", "executable": "triaudit_stream",
            "gpu_available": "true", "gpu_name": card, "l2_bytes": str(l2_bytes),
            "peak_memory_bandwidth_bytes_per_second": f"{peak:.0f}", "synthetic": "true (test fixture, not a measurement)"}


def stream_run(op: str, typ: str, cache: str, nbytes: int, gbps: float, rep: int, reps: int, peak: float) -> dict:
    arrays = 3 if op in ("add", "triad") else 2
    name = f"stream/{op}/{typ}/cache:{cache}/bytes:{nbytes}/manual_time"
    moved = arrays * nbytes
    seconds = moved / (gbps * 1e9)
    return {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
            "run_type": "iteration", "repetitions": reps, "repetition_index": rep, "threads": 1,
            "iterations": 100, "real_time": seconds * 1e6, "cpu_time": 5.0, "time_unit": "us",
            "bytes_per_op": float(moved), "bytes_per_second": gbps * 1e9, "ops_per_region": 1.0,
            "peak_fraction": gbps * 1e9 / peak, "working_set_bytes": float(moved)}


def synthetic_stream_result(card: str, hbm_gbps: float, l2_bytes: int = 50 * 2**20, peak: float = 4.0e12,
                            sizes=(2**20, 2**24, 2**28), reps: int = 3, ops=("copy", "triad"),
                            jitter: float = 0.01, skipped: tuple[str, ...] = ()) -> dict:
    """Bandwidth = hbm_gbps beyond the L2, 3x that inside it; repetitions spread by `jitter`."""
    benchmarks = []
    for op in ops:
        for typ in ("fp32", "fp64"):
            for cache in ("hot", "cold"):
                for n in sizes:
                    arrays = 3 if op in ("add", "triad") else 2
                    base = hbm_gbps * (3 if arrays * n <= l2_bytes and cache == "hot" else 1)
                    for r in range(reps):
                        benchmarks.append(stream_run(op, typ, cache, n, base * (1 + jitter * (r - 1)), r, reps, peak))
    for name in skipped:
        benchmarks.append({"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
                           "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 0,
                           "real_time": 0.0, "cpu_time": 0.0, "time_unit": "us", "error_occurred": True,
                           "error_message": "skipped: needs 3 GiB of device memory, 1 GiB free of 8 GiB"})
    return {"context": synthetic_context(card, l2_bytes, peak), "benchmarks": benchmarks}


def write(path: Path, data: dict) -> Path:
    assert "synthetic" in path.name, "synthetic fixtures must say so in their names"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path
