"""The report, compare and export over every case name the built executables list for the quick
and full profiles (the real catalogues), with synthetic numbers (named so): no section fails on a
name or counter the executables write today."""

from __future__ import annotations

import json

import pytest

from triaudit import commands as cli
from triaudit.runner import profiles
from triaudit.runner import timemodel as T

COUNTERS = {
    "stream": {"bytes_per_second": 3.9e12, "working_set_bytes": 3.0 * 2**30, "peak_fraction": 0.8},
    "gemm": {"flops": 7.0e14, "arithmetic_intensity": 2000.0, "algo_id": 21.0, "m": 8192.0, "n": 8192.0, "k": 8192.0},
    "memcpy": {"bytes_per_second": 5.0e10, "seconds_per_op": 1e-3, "host_timed": 0.0},
    "allreduce": {"algbw": 1e11, "busbw": 1.75e11, "busbw_max_rank": 1.7e11, "ranks": 8.0, "gpus": 8.0},
    "p2p": {"bytes_per_second": 3.5e11, "seconds_per_op": 2e-6},
    "launch": {"per_kernel_s": 2e-6, "fixed_s": 1e-5, "seconds_per_op": 2e-6},
}
ENERGY = {
    "joules_per_op": 0.5,
    "watts_mean": 650.0,
    "energy_window_s": 1.2,
    "noise": 0.01,
    "regions": 20.0,
    "ops_per_region": 1.0,
    "warmup_s": 0.2,
    "sm_clock_mean_mhz": 1755.0,
    "throttled": 0.0,
    "clock_low": 0.0,
    "sw_power_cap_fraction": 0.4,
}


def _synthetic_run(tmp_path, build_dir, profile):
    run = tmp_path / "results" / "nvidia-h200" / f"20260101T000000Z-synthetic-{profile}"
    run.mkdir(parents=True)
    exes = profiles.find_executables(build_dir)
    for name, exe in exes.items():
        cases = T.list_cases(exe, profiles.profile_args(profile, name))
        bench = []
        for case in cases:
            corner = case.split("/")[0]
            counters = {**COUNTERS.get(corner, {}), **ENERGY}
            for r in range(5):
                bench.append(
                    {
                        "name": case,
                        "run_name": case,
                        "run_type": "iteration",
                        "repetitions": 5,
                        "repetition_index": r,
                        "threads": 1,
                        "iterations": 1,
                        "real_time": 100.0 + r,
                        "cpu_time": 1.0,
                        "time_unit": "us",
                        **{k: v * (1 + 0.001 * r) for k, v in counters.items()},
                        "label": "synthetic",
                    }
                )
        ctx = {
            "gpu_available": "true",
            "gpu_name": "NVIDIA H200",
            "synthetic": "true (test fixture)",
            "triaudit_schema_version": "1",
            "l2_bytes": str(60 * 2**20),
            "peak_memory_bandwidth_bytes_per_second": "4800000000000",
            "host": "synthetic-host",
        }
        (run / f"synthetic_{name}.json").write_text(json.dumps({"context": ctx, "benchmarks": bench}))
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "profile": profile,
                "complete": True,
                "card": "NVIDIA H200",
                "host": "synthetic-host",
                "git_commit": "synthetic",
            }
        )
    )
    return run


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_report_compare_export_on_the_real_catalogue(tmp_path, stream_exe, profile, capsys):
    run = _synthetic_run(tmp_path, stream_exe.parents[2], profile)
    out = tmp_path / "report"
    assert cli.main(["report", str(run), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    for section in ("Bandwidth", "Compute", "copies", "allreduce"):
        assert section in md, section
    assert cli.main(["compare", str(run), str(run)]) == 0  # the same run: nothing slower
    assert cli.main(["export", str(run), "--format", "bmf", "--out", str(tmp_path / "bmf.json")]) == 0
    assert "Traceback" not in capsys.readouterr().err
