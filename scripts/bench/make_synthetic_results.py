"""Synthetic result folders for timing `triaudit report` (not measurements: every file's name says
"synthetic", and its context says so too).

    python scripts/bench/make_synthetic_results.py OUT --cards 100            # 100 cards x the full catalogue
    python scripts/bench/make_synthetic_results.py OUT --small-files 300      # 300 small files

Each card gets one run folder `OUT/<card>/<timestamp>-synthetic/` with one file per executable and a
manifest, shaped as `triaudit run` writes them: 5 repetitions per case plus Google Benchmark's
mean/median/stddev/cv aggregates, the counters each corner reports (throughput, clocks, energy).
The case names come from the executables' own `--benchmark_list_tests` (`--build-dir`), or from
catalogue.txt beside this file when no build is at hand.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXECUTABLES = ["stream", "gemm", "memcpy", "launch", "allreduce"]


def catalogue(build_dir: Path | None) -> list[str]:
    if build_dir is not None:
        names = []
        for short in EXECUTABLES:
            exe = build_dir / "benchmarks" / short / f"triaudit_{short}"
            out = subprocess.run([str(exe), "--benchmark_list_tests"], capture_output=True, text=True, check=True)
            names += out.stdout.split()
    else:
        names = [
            line for line in (HERE / "catalogue.txt").read_text().splitlines() if line and not line.startswith("#")
        ]
    clean = []
    for n in names:
        parts = [p for p in n.split("/") if not p.startswith("iterations:") and p not in ("manual_time", "real_time")]
        clean.append("/".join(parts))
    return clean


def counters_for(case: str, seconds: float, rng: random.Random) -> dict[str, float]:
    corner = case.split("/", 1)[0]
    args = dict(p.split(":", 1) for p in case.split("/")[3:] if ":" in p)
    nbytes = float(args.get("bytes", "1048576").split("-")[0])
    # What the harness adds to every case (benchmarks/common/measure.cpp): regions, clocks, energy.
    watts = 550.0 + rng.random() * 50
    c: dict[str, float] = {
        "regions": 20.0,
        "ops_per_region": 1.0,
        "seconds_per_op": seconds,
        "noise": 0.002 + rng.random() * 0.01,
        "warmup_s": 0.2,
        "sm_clock_min_mhz": 1900.0 + rng.random() * 50,
        "sm_clock_mean_mhz": 1960.0 + rng.random() * 20,
        "clock_low": 0.0,
        "throttled": 0.0,
        "sw_power_cap_fraction": 0.0,
        "joules_per_op": seconds * watts,
        "watts_mean": watts,
        "energy_window_s": 1.0 + rng.random(),
        "power_samples_mean_w": watts * (1 + 0.02 * rng.random()),
        "power_samples_max_w": watts * 1.1,
        "temperature_start_c": 40.0 + rng.random() * 5,
        "temperature_end_c": 50.0 + rng.random() * 10,
    }
    if corner == "stream":
        c.update(
            bytes_per_second=3 * nbytes / seconds,
            peak_fraction=0.85 + rng.random() * 0.01,
            working_set_bytes=3 * nbytes,
            bytes_per_joule=3 * nbytes / (seconds * 600.0),
        )
    elif corner == "gemm":
        m, n, k = (float(args.get(x, "4096")) for x in "mnk")
        flops = 2 * m * n * k / seconds
        c.update(
            flops=flops,
            arithmetic_intensity=2 * m * n * k / ((m * k + k * n + m * n) * 2),
            algo_id=float(rng.randrange(8)),
            fp64_tensor_cores=1.0,
            flops_per_joule=flops / 600.0,
        )
    elif corner == "memcpy":
        c.update(
            bytes_per_second=nbytes / seconds,
            seconds_per_op=seconds,
            host_timed=0.0,
            bytes_per_joule=nbytes / (seconds * 600),
        )
    elif corner == "launch":
        c.update(per_kernel_s=seconds / 100)
    elif corner == "allreduce":
        c.update(
            algbw=nbytes / seconds, busbw=1.75 * nbytes / seconds, ranks=8.0, busbw_max_rank=1.8 * nbytes / seconds
        )
    return c


def entries(case: str, rng: random.Random, reps: int = 5) -> list[dict]:
    base = 1e-6 * (1 + rng.random() * 1000)
    name = case + "/manual_time"
    rows = []
    for r in range(reps):
        t = base * (1 + 0.01 * rng.random())
        rows.append(
            {
                "name": name,
                "family_index": 0,
                "per_family_instance_index": 0,
                "run_name": name,
                "run_type": "iteration",
                "repetitions": reps,
                "repetition_index": r,
                "threads": 1,
                "iterations": 100,
                "real_time": t * 1e6,
                "cpu_time": 3.0,
                "time_unit": "us",
                **counters_for(case, t, rng),
            }
        )
    for agg in ("mean", "median", "stddev", "cv"):
        times = [e["real_time"] for e in rows]
        v = {
            "mean": statistics.mean,
            "median": statistics.median,
            "stddev": statistics.stdev,
            "cv": lambda x: statistics.stdev(x) / statistics.mean(x),
        }[agg](times)
        rows.append(
            {
                "name": f"{name}_{agg}",
                "family_index": 0,
                "per_family_instance_index": 0,
                "run_name": name,
                "run_type": "aggregate",
                "repetitions": reps,
                "threads": 1,
                "aggregate_name": agg,
                "aggregate_unit": "percentage" if agg == "cv" else "time",
                "iterations": reps,
                "real_time": v,
                "cpu_time": 3.0,
                "time_unit": "us",
            }
        )
    return rows


def context(card: str, executable: str, i: int) -> dict:
    return {
        "date": f"2026-01-{1 + i % 28:02d}T00:00:00+00:00",
        "host_name": "synthetic-host",
        "executable": f"triaudit_{executable}",
        "num_cpus": 64,
        "library_version": "v1.9.1",
        "library_build_type": "release",
        "gpu_available": "true",
        "gpu_name": card,
        "gpu_uuid": f"GPU-synthetic-{i:04d}",
        "compute_capability": "9.0",
        "sm_count": "132",
        "l2_bytes": str(50 * 2**20),
        "memory_bytes": str(141 * 10**9),
        "peak_memory_bandwidth_bytes_per_second": "4800000000000",
        "driver_version": "580.00",
        "triaudit_version": "0.1.0",
        "triaudit_git_commit": "synthetic",
        "triaudit_schema_version": "1",
        "synthetic": "true (benchmark fixture, not a measurement)",
    }


def write_cards(out: Path, cards: int, build_dir: Path | None) -> int:
    names = catalogue(build_dir)
    by_exe: dict[str, list[str]] = {}
    for n in names:
        by_exe.setdefault(n.split("/", 1)[0], []).append(n)
    rng = random.Random(1)
    files = 0
    for i in range(cards):
        card = f"Synthetic Card {i:03d}"
        run = out / f"synthetic-card-{i:03d}" / "20260101T000000Z-synthetic"
        run.mkdir(parents=True, exist_ok=True)
        for exe, cases in by_exe.items():
            bench = [e for c in cases for e in entries(c, rng)]
            (run / f"triaudit_{exe}_synthetic.json").write_text(
                json.dumps({"context": context(card, exe, i), "benchmarks": bench})
            )
            files += 1
        (run / "manifest.json").write_text(
            json.dumps(
                {
                    "profile": "full",
                    "complete": True,
                    "started_utc": "20260101T000000Z",
                    "host": "synthetic-host",
                    "git_commit": "synthetic",
                }
            )
        )
    return files


def write_small_files(out: Path, count: int) -> int:
    """Nightly-style small files: a few STREAM cases each, one run folder per file, 30 cards."""
    rng = random.Random(2)
    cases = [f"stream/triad/fp32/cache:cold/bytes:{1 << s}" for s in range(20, 24)]
    for i in range(count):
        card = f"Synthetic Card {i % 30:03d}"
        run = out / f"synthetic-card-{i % 30:03d}" / f"2026{1 + i // 28 % 12:02d}{1 + i % 28:02d}T000000Z-synthetic-{i}"
        run.mkdir(parents=True, exist_ok=True)
        bench = [e for c in cases for e in entries(c, rng)]
        (run / "triaudit_stream_synthetic.json").write_text(
            json.dumps({"context": context(card, "stream", i), "benchmarks": bench})
        )
    return count


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path, help="folder to fill (must not exist)")
    p.add_argument("--cards", type=int, default=0, help="cards, each with a run of the full catalogue")
    p.add_argument("--small-files", type=int, default=0, help="small files, each its own run")
    p.add_argument("--build-dir", type=Path, help="take the catalogue from these executables (default: catalogue.txt)")
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=False)
    n = write_cards(a.out, a.cards, a.build_dir) if a.cards else 0
    n += write_small_files(a.out, a.small_files) if a.small_files else 0
    print(f"wrote {n} synthetic result files under {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
