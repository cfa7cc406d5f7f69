"""scripts/clock_sampling_ab.py, the GPU check's A/B of NVML clock sampling on the launch cases:
its comparison, on synthetic per-case means (not measurements)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "clock_sampling_ab.py"
spec = importlib.util.spec_from_file_location("clock_sampling_ab", SCRIPT)
ab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ab)


def test_the_comparison_states_each_mode_against_off_and_the_verdict():
    case = "launch/sync/event_query"
    rounds = [
        {"off": {case: 1.00e-6}, "regions": {case: 1.002e-6}, "thread": {case: 1.05e-6}},
        {"off": {case: 1.01e-6}, "regions": {case: 1.008e-6}, "thread": {case: 1.07e-6}},
    ]
    lines = ab.compare(rounds)
    row = next(line for line in lines if line.startswith(case))
    assert "+0.00%" in row and "+5.47%" in row and "1.00%" in row  # regions, thread, off's own spread
    assert lines[-1].endswith("under 0.5 %")
    rounds[1]["regions"][case] = 1.03e-6
    assert "NOT under 0.5 %" in ab.compare(rounds)[-1]
    assert ab.compare([])[-1].startswith("no case")


def test_means_come_from_the_repetitions_and_skip_errors(tmp_path):
    rows = [
        {"name": "launch/sync/x/manual_time", "run_name": "launch/sync/x/manual_time", "seconds_per_op": 2e-6},
        {"name": "launch/sync/x/manual_time", "run_name": "launch/sync/x/manual_time", "seconds_per_op": 4e-6},
        {"name": "launch/sync/y/manual_time", "error_occurred": True, "seconds_per_op": 1.0},
        {"name": "launch/sync/x/manual_time_mean", "run_type": "aggregate", "seconds_per_op": 9.0},
    ]
    f = tmp_path / "synthetic.json"
    f.write_text(json.dumps({"benchmarks": rows}))
    assert ab.per_case_means(f) == {"launch/sync/x": 3e-6}
