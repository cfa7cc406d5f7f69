"""Synthetic whole-node fleets for timing the commands that read many runs (gate, floors derive,
outliers, history, report) and the results store. Not measurements: every file's context says
"synthetic", and so does every host's name. Not a test (CI's fleets are small: tests/synthetic_gate.py).

    python scripts/bench/make_synthetic_fleet.py OUT --hosts 128                  # 1,024 GPUs, 1 night
    python scripts/bench/make_synthetic_fleet.py OUT --hosts 16 --nights 30       # 128 GPUs, 30 nights
    python scripts/bench/make_synthetic_fleet.py OUT --hosts 1 --nights 365       # 1 host, a year
    python scripts/bench/make_synthetic_fleet.py OUT --hosts 1 --gpus 1 --nights 365 --single   # `run` shape

Each host and night is a run folder `OUT/<card>/<stamp>-<host>/` in the shape `triaudit run
--all-gpus` writes (the quick profile): per GPU one file per executable (STREAM, GEMM, the GEMM
ladder, copies, launches: 22 cases), 5 repetitions per case plus Google Benchmark's mean, median,
stddev and cv aggregates, the counters the harness adds to every case (clocks, energy, power,
temperature, the 14 health counters) and each case's schema-2 description: 1,080 rows per GPU in
the tidy table. Per node the p2p file (one representative pair measured, the other 55 skipped as
`--pairs=representative` skips them) and the allreduce file; `manifest.json` names each GPU, and
`hosts/<stamp>-<host>.status` says the host finished. `--single`: `triaudit run`'s shape (one GPU,
no node files, no status file).

`--link-nights`: every night after the first holds hard links to the first night's result files
(its own folder, stamp and manifest): a year of a big fleet without a year of disk. The readers
take a night's figures from its files, so the nights are alike; the runs are not.

About 0.4 MB of JSON per GPU and night (8,192 GPUs: 3.3 GB); check `df -h` first.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
from pathlib import Path

CARD = "NVIDIA H100 80GB HBM3"
CARD_DIR = "nvidia-h100-80gb-hbm3"
REPS = 5
AGGREGATES = ("mean", "median", "stddev", "cv")

# (executable, case, judged counter, healthy figure, headline or "") — the quick profile's per-GPU cases.
CASES = [
    (
        "triaudit_stream",
        "stream/triad_sustained/fp32/cache:cold/bytes:1073741824",
        "bytes_per_second",
        3.0e12,
        "triad/sustained",
    ),
    ("triaudit_stream", "stream/triad/fp32/cache:hot/bytes:4194304", "bytes_per_second", 7.5e12, ""),
    ("triaudit_stream", "stream/triad/fp32/cache:cold/bytes:1073741824", "bytes_per_second", 3.05e12, "triad"),
    ("triaudit_gemm", "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192", "flops", 7.4e14, ""),
    ("triaudit_gemm", "gemm/cublaslt/fp8e4m3/layout:tn/m:8192/n:8192/k:8192", "flops", 1.3e15, ""),
    ("triaudit_gemm", "gemm/ceiling/bf16/burst", "flops", 8.2e14, "bf16/burst"),
    ("triaudit_gemm", "gemm/ceiling/bf16/sustained", "flops", 7.6e14, "bf16/sustained"),
    (
        "triaudit_gemm_ladder",
        "gemm/ladder_l3_mma_cp_async_bf16/bf16/layout:tn/m:8192/n:8192/k:8192",
        "flops",
        3.1e14,
        "",
    ),
    (
        "triaudit_gemm_ladder",
        "gemm/ladder_l5_wgmma_warp_specialized_bf16/bf16/layout:tn/m:8192/n:8192/k:8192",
        "flops",
        6.2e14,
        "",
    ),
    ("triaudit_memcpy", "memcpy/h2d/pageable/bytes:268435456", "bytes_per_second", 2.1e10, "h2d/pageable"),
    ("triaudit_memcpy", "memcpy/h2d/pinned/bytes:4096", "bytes_per_second", 1.9e9, ""),
    ("triaudit_memcpy", "memcpy/h2d/pinned/bytes:268435456", "bytes_per_second", 5.6e10, "h2d"),
    ("triaudit_memcpy", "memcpy/d2h/pinned/bytes:4096", "bytes_per_second", 1.8e9, ""),
    ("triaudit_memcpy", "memcpy/d2h/pinned/bytes:268435456", "bytes_per_second", 5.6e10, "d2h"),
    ("triaudit_memcpy", "memcpy/bidir/pinned/bytes:268435456", "bytes_per_second", 9.8e10, ""),
    ("triaudit_memcpy", "memcpy/d2d/copy_engine/bytes:268435456", "bytes_per_second", 1.6e12, "d2d"),
    ("triaudit_launch", "launch/empty/enqueue/kernels:512", "time_s", 2.5e-6, "launch/enqueue"),
    ("triaudit_launch", "launch/chain_fit/eager/kernels:1-1024", "per_kernel_s", 2.2e-6, "launch/eager"),
    ("triaudit_launch", "launch/chain_fit/graph/kernels:1-1024", "per_kernel_s", 1.1e-6, "launch/graph"),
    ("triaudit_launch", "launch/fusion/unfused/steps:64/bytes:65536", "time_s", 1.6e-4, ""),
    ("triaudit_launch", "launch/fusion/fused/steps:64/bytes:65536", "time_s", 2.4e-5, ""),
    ("triaudit_launch", "launch/sync/stream_synchronize", "time_s", 3.0e-6, ""),
]
HEALTH = (
    "health_ecc_uncorrected",
    "health_remapped_rows_uncorrectable",
    "health_remap_pending",
    "health_remap_failure",
    "health_retired_pages_dbe",
    "health_nvlink_links_down",
    "health_ecc_corrected",
    "health_remapped_rows_correctable",
    "health_retired_pages_sbe",
    "health_xid_events",
    "health_nvlink_crc_errors",
    "health_nvlink_replay_errors",
    "health_nvlink_recovery_errors",
    "health_pcie_replays",
)
P2P_BYTES = 536870912
ALLREDUCE = [(f"allreduce/out_of_place/fp32/algo:{a}/bytes:{b}", b) for a in ("ring", "auto") for b in (8, 67108864)]


def harness_counters(seconds: float, rng: random.Random) -> dict[str, float]:
    """What the measurement loop adds to every case (benchmarks/common/measure.cpp): regions,
    clocks, throttle flags, energy, power, temperature, memory clocks."""
    watts = 550.0 + rng.random() * 50
    return {
        "regions": 20.0,
        "ops_per_region": 1.0,
        "seconds_per_op": seconds,
        "noise": 0.002 + rng.random() * 0.01,
        "warmup_s": 0.1,
        "window_s": 0.03,
        "sm_clock_min_mhz": 1900.0 + rng.random() * 50,
        "sm_clock_mean_mhz": 1960.0 + rng.random() * 20,
        "sm_clock_max_mhz": 1980.0,
        "memory_clock_mean_mhz": 2619.0,
        "memory_clock_max_mhz": 2619.0,
        "power_limit_w": 700.0,
        "clock_low": 0.0,
        "throttled": 0.0,
        "sw_power_cap_fraction": 0.0,
        "hw_slowdown_fraction": 0.0,
        "thermal_fraction": 0.0,
        "joules_per_op": seconds * watts,
        "watts_mean": watts,
        "energy_window_s": 1.0 + rng.random(),
        "power_samples": 20.0,
        "power_samples_mean_w": watts * (1 + 0.02 * rng.random()),
        "power_samples_max_w": watts * 1.1,
        "temperature_start_c": 40.0 + rng.random() * 5,
        "temperature_end_c": 50.0 + rng.random() * 10,
        "stream_latch": 1.0,
        "l2_flushed": 1.0,
        "graph": 0.0,
        "pcie_rx_bytes": 0.0,
        "pcie_tx_bytes": 0.0,
        "numa_node": 0.0,
    }


def describe(case: str, judged: str, headline: str, scope: str = "gpu") -> dict:
    parts = case.split("/")
    axes = {"op": parts[1], "variant": parts[2] if len(parts) > 2 else ""}
    axes.update(p.split(":", 1) for p in parts[3:] if ":" in p)
    d = {"axes": axes, "judged": judged, "scope": scope}
    if headline:
        d["headline"] = headline
    return d


def entries(case: str, judged: str, value: float, headline: str, rng: random.Random, health: dict, scope="gpu"):
    """One case's repetitions and aggregates, around `value` of its judged counter."""
    name = case + "/manual_time"
    description = describe(case, judged, headline, scope)
    rows = []
    for r in range(REPS):
        v = value * (1 + rng.gauss(0, 0.003))
        if judged in ("time_s", "per_kernel_s"):
            seconds = v if judged == "time_s" else v * 512
        else:
            seconds = 1e9 / v if judged == "flops" else 2**28 / v
        c = harness_counters(seconds, rng)
        if judged != "time_s":
            c[judged] = v
        if judged == "flops":
            c.update(arithmetic_intensity=2730.7, algo_id=3.0, flops_per_joule=v / c["watts_mean"])
        elif judged == "bytes_per_second":
            c.update(bytes_per_op=v * seconds, working_set_bytes=v * seconds, bytes_per_joule=v / c["watts_mean"])
        c.update(health)
        rows.append(
            {
                "name": name,
                "family_index": 0,
                "per_family_instance_index": 0,
                "run_name": name,
                "run_type": "iteration",
                "repetitions": REPS,
                "repetition_index": r,
                "threads": 1,
                "iterations": 1,
                "real_time": seconds * 1e6,
                "cpu_time": seconds * 1e6,
                "time_unit": "us",
                "triaudit": description,
                **c,
            }
        )
    times = sorted(e["real_time"] for e in rows)
    mean = sum(times) / REPS
    sd = (sum((t - mean) ** 2 for t in times) / (REPS - 1)) ** 0.5
    for agg, v in zip(AGGREGATES, (mean, times[REPS // 2], sd, sd / mean)):
        rows.append(
            {
                "name": f"{name}_{agg}",
                "family_index": 0,
                "per_family_instance_index": 0,
                "run_name": name,
                "run_type": "aggregate",
                "repetitions": REPS,
                "threads": 1,
                "aggregate_name": agg,
                "aggregate_unit": "percentage" if agg == "cv" else "time",
                "iterations": REPS,
                "real_time": v,
                "cpu_time": v,
                "time_unit": "us",
            }
        )
    return rows


def skipped(case: str, why: str) -> dict:
    name = case + "/manual_time"
    return {
        "name": name,
        "family_index": 0,
        "per_family_instance_index": 0,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": REPS,
        "repetition_index": 0,
        "threads": 1,
        "iterations": 0,
        "real_time": 0,
        "cpu_time": 0,
        "time_unit": "us",
        "error_occurred": True,
        "error_message": "skipped: " + why,
    }


def uuid(host_no: int, index: int) -> str:
    return f"GPU-5e7e7e7e-{host_no:04x}-{index:04x}-{host_no * 8 + index:04x}-00000000b3c4"


def context(host: str, executable: str, index: int | None, host_no: int, stamp: str) -> dict:
    ctx = {
        "date": stamp,
        "host_name": host,
        "executable": executable,
        "num_cpus": 112,
        "mhz_per_cpu": 2000,
        "cpu_scaling_enabled": False,
        "library_version": "v1.7.1",
        "library_build_type": "release",
        "gpu_available": "true",
        "gpu_name": CARD,
        "gpu_integrated": "false",
        "compute_capability": "9.0",
        "sm_count": "132",
        "l2_bytes": str(50 * 2**20),
        "memory_bytes": "85051572224",
        "memory_bus_width_bits": "5120",
        "memory_clock_mhz": "2619",
        "peak_memory_bandwidth_bytes_per_second": "3352320000000",
        "sm_clock_max_mhz": "1980",
        "sm_clock_observed_mhz": "1980",
        "ecc": "on",
        "pcie_generation_current": "5",
        "pcie_generation_max": "5",
        "pcie_width_current": "16",
        "pcie_width_max": "16",
        "nvlink_active_links": "18",
        "driver_version": "550.54.15",
        "cuda_driver_version": "12.4",
        "cuda_runtime_version": "12.4",
        "cuda_toolkit_version": "12.4",
        "cublas_version": "12.4.5",
        "nccl_version": "2.21.5",
        "cuda_architectures_built": "80;86;89;90;100;120",
        "triaudit_version": "0.3.0",
        "triaudit_git_commit": "synthetic",
        "triaudit_schema_version": "2",
        "triaudit_provenance": "synthetic",
        "synthetic": "true (benchmark fixture, not a measurement)",
        "host": host,
        "stream_latch": "on",
        "numa_binding": "on (node 0)",
        "power_limit_enforced_w": "700",
        "power_limit_default_w": "700",
        "temperature_start_c": "38",
        "energy_counter": "nvml total energy",
        "nvml": "loaded",
        "nvml_library": "libnvidia-ml.so.1",
        "health_counters": ",".join(HEALTH),
    }
    if index is not None:
        ctx.update(
            gpu_uuid=uuid(host_no, index),
            gpu_pci_bus_id=f"00000000:{0x18 + index:02X}:00.0",
            gpu_index=str(index),
            siblings_loaded="true",
            cuda_visible_devices=uuid(host_no, index),
        )
    return ctx


def write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, separators=(",", ":")))


def host_night(out: Path, host_no: int, gpus: int, night: _dt.date, slow: dict, single: bool, seed: int) -> Path:
    host = f"synthetic-node-{host_no:04d}"
    stamp = night.strftime("%Y%m%dT020000Z")
    run = out / CARD_DIR / f"{stamp}-{host}"
    run.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    manifest_gpus = []
    for i in range(gpus):
        factor = 1 + rng.gauss(0, 0.004)
        per_exe: dict[str, list] = {}
        health = {h: 0.0 for h in HEALTH}
        if rng.random() < 0.01:
            health["health_ecc_corrected"] = float(rng.randrange(1, 4))
        for exe, case, judged, value, headline in CASES:
            f = factor * slow.get((host_no, i, case), 1.0)
            v = value / f if judged in ("time_s", "per_kernel_s") else value * f
            per_exe.setdefault(exe, []).extend(entries(case, judged, v, headline, rng, health))
        executables = []
        for exe, ents in per_exe.items():
            name = f"{exe}.json" if single else f"{exe}.gpu{i}.json"
            write_json(
                run / name, {"context": context(host, exe, None if single else i, host_no, stamp), "benchmarks": ents}
            )
            executables.append({"executable": exe, "json": name, "log": name[:-5] + ".log", "exit_code": 0})
        manifest_gpus.append({"index": i, "uuid": uuid(host_no, i), "executables": executables})
    node_level = []
    if not single:
        ctx = context(host, "triaudit_p2p", None, host_no, stamp)
        ctx.update(p2p_gpu_count=str(gpus), p2p_gpus_visible=str(gpus))
        ents: list = []
        for test in ("ce/uni", "ce/bidir", "latency/ce"):
            for s in range(gpus):
                ctx[f"gpu_{s}_pci_bus_id"] = f"00000000:{0x18 + s:02X}:00.0"
                ctx[f"gpu_{s}_uuid"] = uuid(host_no, s)
                for d in range(gpus):
                    if s == d:
                        continue
                    ctx[f"p2p_link_{s}_{d}"] = "NV18 (18 NVLinks)"
                    nbytes = 4 if test == "latency/ce" else P2P_BYTES
                    case = f"p2p/{test}/src:{s}/dst:{d}/bytes:{nbytes}"
                    if (s, d) == (0, 1):
                        judged, v = ("time_s", 2.4e-6) if test == "latency/ce" else ("bytes_per_second", 3.9e11)
                        ents += entries(case, judged, v, "", rng, {h: 0.0 for h in HEALTH}, "node")
                    else:
                        ents.append(
                            skipped(
                                case,
                                f"not the representative pair of its link type (NV18): GPU {s} -> GPU {d} stands for it as GPU 0 -> GPU 1",
                            )
                        )
        write_json(run / "triaudit_p2p.node.json", {"context": ctx, "benchmarks": ents})
        node_level.append({"executable": "triaudit_p2p", "json": "triaudit_p2p.node.json", "exit_code": 0})
        ctx = context(host, "triaudit_allreduce", None, host_no, stamp)
        ctx.update(allreduce_ranks=str(gpus), allreduce_nodes="1", allreduce_gpus_per_node=str(gpus))
        ents = []
        for case, nbytes in ALLREDUCE:
            v = 3.6e11 if nbytes > 8 else 1.0e6
            ents += entries(case, "busbw", v, "allreduce" if "auto" in case and nbytes > 8 else "", rng, {}, "node")
            for e in ents[-9:-4]:
                e["ranks"] = float(gpus)
                e["algbw"] = e["busbw"] / 1.75
        write_json(run / "triaudit_allreduce.node.json", {"context": ctx, "benchmarks": ents})
        node_level.append({"executable": "triaudit_allreduce", "json": "triaudit_allreduce.node.json", "exit_code": 0})
    manifest = {
        "profile": "quick",
        "started_utc": stamp,
        "finished_utc": stamp,
        "host": host,
        "complete": True,
        "git_commit": "synthetic",
        "synthetic": "true (benchmark fixture, not a measurement)",
        "triaudit_provenance": "synthetic",
        "card": CARD,
    }
    if not single:
        manifest.update(gpus=manifest_gpus, node_level={"executables": node_level})
    write_json(run / "manifest.json", manifest)
    if not single:
        hosts = out / "hosts"
        hosts.mkdir(exist_ok=True)
        write_json(
            hosts / f"{stamp}-{host}.status",
            {
                "node": host,
                "host": host,
                "state": "complete",
                "exit_code": 0,
                "started_utc": stamp,
                "run_dir": str(run.relative_to(out)),
            },
        )
    return run


def link_night(first: Path, out: Path, night: _dt.date) -> None:
    """A night of hard links to the first night's result files, with its own folder and manifest."""
    host = first.name.split("-", 1)[1]
    stamp = night.strftime("%Y%m%dT020000Z")
    run = first.parent / f"{stamp}-{host}"
    run.mkdir(parents=True, exist_ok=True)
    for f in first.iterdir():
        if f.name == "manifest.json":
            m = json.loads(f.read_text())
            m["started_utc"] = m["finished_utc"] = stamp
            write_json(run / "manifest.json", m)
        else:
            os.link(f, run / f.name)
    hosts = out / "hosts"
    if hosts.is_dir():
        write_json(
            hosts / f"{stamp}-{host}.status",
            {"node": host, "host": host, "state": "complete", "exit_code": 0, "started_utc": stamp},
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path, help="folder to fill (must not exist)")
    p.add_argument("--hosts", type=int, default=16)
    p.add_argument("--gpus", type=int, default=8, help="GPUs per host")
    p.add_argument("--nights", type=int, default=1)
    p.add_argument("--first-night", default="2026-11-01")
    p.add_argument("--single", action="store_true", help="`triaudit run`'s shape: one GPU, no node files")
    p.add_argument("--link-nights", action="store_true", help="nights after the first: hard links to its files")
    p.add_argument("--slow", type=float, default=0.005, help="share of GPUs made 15 %% slow on one case")
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=False)
    rng = random.Random(7)
    slow = {}
    for h in range(a.hosts):
        for i in range(a.gpus):
            if rng.random() < a.slow:
                slow[(h, i, rng.choice(CASES)[1])] = 0.85
    first = _dt.date.fromisoformat(a.first_night)
    made: dict[int, Path] = {}
    for n in range(a.nights):
        night = first + _dt.timedelta(days=n)
        for h in range(a.hosts):
            if n and a.link_nights:
                link_night(made[h], a.out, night)
            else:
                made[h] = host_night(a.out, h, a.gpus, night, slow, a.single, seed=h * 100003 + n)
    print(f"wrote {a.hosts} host(s) x {a.gpus} GPU(s) x {a.nights} night(s) of synthetic runs under {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
