"""Synthetic soak data for tests: hash-log records in the exact shape triaudit_soak writes
(benchmarks/soak/soak_plan.cpp: reference_line, window_line), a GEMM "output" whose tile hashes
come from the Python reference of the hash (soak_hash_reference.py), and result-file entries as
the executable reports each window. Made-up numbers, not measurements: every file made from here
has "synthetic" in its name or its context says so.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from soak_hash_reference import combined, tile_hashes

ROWS = COLS = 64  # a small GEMM output: 2 x 2 tiles of 32 x 32
TILE = 32
GEMM_CASE = f"soak/gemm/bf16/impl:ladder_l3/m:{ROWS}/n:{COLS}/k:{ROWS}"
TRIAD_CASE = "soak/stream/triad/type:fp32/array:2xL2"
COPY_CASES = {k: f"soak/copy/{k}/bytes:67108864" for k in ("h2d", "d2h", "p2p")}
CASES = {"gemm": GEMM_CASE, "triad": TRIAD_CASE, **COPY_CASES}
# Made-up steady figures of a synthetic GPU (H200-like magnitudes, not measurements).
RATES = {"gemm": 700e12, "triad": 4.2e12, "h2d": 55e9, "d2h": 55e9, "p2p": 350e9}
POWER_W, CLOCK_MHZ, TEMPERATURE_C = 690.0, 1980.0, 71.0
H200 = "NVIDIA H200"


def gemm_output() -> list[int]:
    """The 16-bit values of the synthetic GEMM's output, column-major (the same on every GPU)."""
    return [((p * 2654435761) >> 7) & 0xFFFF for p in range(ROWS * COLS)]


@cache
def _golden() -> tuple[int, ...]:
    return tuple(tile_hashes(gemm_output(), ROWS, COLS, TILE, TILE))


def golden_tiles() -> list[int]:
    return list(_golden())


def flipped_tile_hash(tile: int, bit: int) -> int:
    """The hash tile `tile` gets when one bit of its first element flips."""
    values = gemm_output()
    tiles_m = ROWS // TILE
    r0, c0 = (tile % tiles_m) * TILE, (tile // tiles_m) * TILE
    values[r0 + c0 * ROWS] ^= 1 << bit
    return tile_hashes(values, ROWS, COLS, TILE, TILE)[tile]


def tile_place(tile: int) -> dict:
    tiles_m = ROWS // TILE
    return {"row0": (tile % tiles_m) * TILE, "rows": TILE, "col0": (tile // tiles_m) * TILE, "cols": TILE}


def reference_record(
    uuid: str, time_unix: float, first_window: int = 0, tiles: list[int] | None = None, name: str = H200
) -> dict:
    tiles = golden_tiles() if tiles is None else tiles
    return {
        "record": "reference",
        "time_unix": time_unix,
        "time_utc": "synthetic",
        "gpu_uuid": uuid,
        "gpu_name": name,
        "case": GEMM_CASE,
        "first_window": first_window,
        "inputs": "synthetic",
        "fp64_check": "synthetic: within the BF16 bound",
        "rows": ROWS,
        "cols": COLS,
        "tile_rows": TILE,
        "tile_cols": TILE,
        "elem_bytes": 2,
        "combined": f"{combined(tiles):016x}",
        "tile_hashes": " ".join(f"{h:016x}" for h in tiles),
    }


def deviation(item: int, time_unix: float, tile: int, got: int, expected: int, diagnosis: str = "") -> dict:
    return {
        "item": item,
        "time_unix": time_unix,
        "time_utc": "synthetic",
        "differing_tiles": 1,
        "tiles": [{"tile": tile, **tile_place(tile), "got": f"{got:016x}", "expected": f"{expected:016x}"}],
        "diagnosis": diagnosis,
    }


def window_record(
    window: int,
    start: float,
    end: float,
    loads=("gemm", "triad", "h2d", "d2h"),
    rates: dict | None = None,
    deviations: dict | None = None,
    power_w: float = POWER_W,
    error: str = "",
    gemm_hash: int | None = None,
) -> dict:
    """One window; `deviations`: workload -> list of deviation() records; `gemm_hash` the last
    GEMM output's combined hash (default: the golden output's)."""
    rates = {**RATES, **(rates or {})}
    deviations = deviations or {}
    workloads = {}
    for k in loads:
        devs = deviations.get(k, [])
        workloads[k] = {
            "case": CASES[k],
            "items": 100,
            "checked": 100 if k != "d2h" else 2,
            "rate": rates[k],
            "seconds_per_op": 0.001,
            "last_hash": f"{(combined(golden_tiles()) if gemm_hash is None else gemm_hash) if k == 'gemm' else 0:016x}",
            "deviating": len(devs),
            "deviations": devs,
        }
    return {
        "record": "window",
        "window": window,
        "start_unix": start,
        "end_unix": end,
        "end_utc": "synthetic",
        "sm_clock_mean_mhz": CLOCK_MHZ,
        "power_mean_w": power_w,
        "temperature_end_c": TEMPERATURE_C,
        "throttled": False,
        "clock_reasons": "",
        "error": error,
        "workloads": workloads,
    }


def entry(
    case: str, window: int, end_unix: float, start_unix: float, rate: float, power_w: float = POWER_W, error: str = ""
) -> dict:
    """A window's result-file entry of one case, as triaudit_soak writes it (repetition_index 0:
    each window is its own registration; `triaudit soak` renumbers them)."""
    name = f"{case}/manual_time"
    e = {
        "name": name,
        "family_index": 0,
        "per_family_instance_index": 0,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "threads": 1,
    }
    if error:
        return {
            **e,
            "error_occurred": True,
            "error_message": error,
            "iterations": 0,
            "real_time": 0,
            "cpu_time": 0,
            "time_unit": "us",
        }
    rate_key = "flops" if case.startswith("soak/gemm/") else "bytes_per_second"
    return {
        **e,
        "iterations": 1,
        "real_time": 1000.0,
        "cpu_time": 1.0,
        "time_unit": "us",
        rate_key: rate,
        "window": float(window),
        "window_end_unix_s": end_unix,
        "window_start_unix_s": end_unix - 1.0,
        "soak_elapsed_s": end_unix - start_unix,
        "operations": 100.0,
        "operations_checked": 100.0,
        "hash_mismatches": 0.0,
        "sm_clock_mean_mhz": CLOCK_MHZ,
        "power_samples_mean_w": power_w,
        "watts_mean": power_w,
        "temperature_end_c": TEMPERATURE_C,
        "throttled": 0.0,
        "health_ecc_uncorrected": 0.0,
        "health_xid_events": 0.0,
    }


def context(uuid: str, index: int, name: str = H200, **extra) -> dict:
    return {
        "host_name": "synthetic-node",
        "executable": "triaudit_soak",
        "gpu_available": "true",
        "gpu_name": name,
        "gpu_uuid": uuid,
        "gpu_index": str(index),
        "siblings_loaded": "true",
        "synthetic": "true (test double of triaudit_soak, not a measurement)",
        "triaudit_provenance": "synthetic",
        **extra,
    }


def write_lines(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
