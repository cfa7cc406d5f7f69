"""The report's soak section (report/sections/soak.py) on synthetic soak result files (in the
shape `triaudit soak` writes them; not measurements): one panel per GPU, a row per GPU, the
table of events."""

from __future__ import annotations

import json

import synthetic_soak as S
from synthetic import write

from triaudit.report.sections.soak import soak_section
from triaudit.results.table import load_results

START = 1_767_225_600.0
UUIDS = ["GPU-5a4e0000-0000-4000-8000-000000000000", "GPU-5a4e0000-0000-4000-8000-000000000001"]
EVENT = {
    "kind": "sdc",
    "gpu_uuid": UUIDS[1],
    "gpu_index": "1",
    "gpu_name": S.H200,
    "time_unix": START + 11100.0,
    "elapsed_s": 11100.0,
    "window": 18,
    "case": S.GEMM_CASE,
    "detail": "1 of 100 GEMMs in the window differed from the first output",
    "tiles": [{"tile": 3, "row0": 32, "rows": 32, "col0": 32, "cols": 32}],
    "time_utc": "2026-01-01T03:05:00Z",
    "hour": 3.0833,
}


def _soak_run(tmp_path, windows=24):
    run = tmp_path / "results" / "nvidia-h200" / "20260101T000000Z-node-soak"
    for i, uuid in enumerate(UUIDS):
        entries = []
        for w in range(windows):
            end = START + 600 * (w + 1)
            for k in ("gemm", "triad"):
                e = S.entry(
                    S.CASES[k], w, end, START, S.RATES[k] * (0.95 if i == 0 and w >= 12 and k == "gemm" else 1.0)
                )
                entries.append({**e, "repetition_index": w, "repetitions": windows})
        events = [EVENT] if i == 1 else []
        ctx = S.context(
            uuid,
            i,
            soak_start_unix_s=f"{START:.3f}",
            soak_windows=str(windows),
            soak_windows_done=str(windows),
            soak_segments="1",
            soak_drift_bound_pct="3",
            soak_verdict="clean" if not events else "1 event(s)",
            soak_events=json.dumps(events),
        )
        write(run / f"triaudit_soak.gpu{i}.synthetic.json", {"context": ctx, "benchmarks": entries})
    return load_results([tmp_path / "results"])


def test_one_panel_per_gpu_a_row_per_gpu_and_the_events(tmp_path):
    sec = soak_section(_soak_run(tmp_path))
    (cap, per_gpu), (cap2, events) = sec.tables
    assert "hashed on the device over all its bits" in cap and "more than 3 % below the start" in cap
    assert list(per_gpu.columns) == ["NVIDIA H200 · GPU 0", "NVIDIA H200 · GPU 1"]
    gpu0, gpu1 = per_gpu["NVIDIA H200 · GPU 0"], per_gpu["NVIDIA H200 · GPU 1"]
    assert gpu0["windows"] == "24 of 24" and gpu0["hours"] == "4.00" and gpu0["restarts"] == "0"
    assert gpu0["gemm (TFLOP/s, median, min)"] == "682.5, 665" and gpu1["gemm (TFLOP/s, median, min)"] == "700, 700"
    assert (gpu0["events"], gpu0["verdict"], gpu1["events"], gpu1["verdict"]) == ("0", "clean", "1", "sdc")
    assert gpu0["power (W, median)"] == "690" and gpu0["throttled windows"] == "0"
    [row] = events.reset_index().to_dict("records")
    assert (row["GPU"], row["time (UTC)"], row["hour"], row["kind"]) == (
        "NVIDIA H200 · GPU 1",
        "2026-01-01T03:05:00Z",
        "3.08",
        "sdc",
    )
    assert row["tile"] == "3 (rows 32-63, cols 32-63)" and row["case"] == S.GEMM_CASE
    [(stem, caption, fig)] = sec.figures
    assert stem == "soak_timeline" and len(fig.axes) == 2
    assert [ax.get_title() for ax in fig.axes] == ["NVIDIA H200 · GPU 0", "NVIDIA H200 · GPU 1"]
    assert len(sec.csv) == 2 * 24 * 2 and set(sec.csv["workload"]) == {"gemm", "triad"}
    assert sec.csv["hour"].max() == 4.0


def test_no_soak_no_section(tmp_path):
    from synthetic import synthetic_stream_result

    write(tmp_path / "r" / "synthetic_stream.json", synthetic_stream_result("NVIDIA H200", 4000))
    sec = soak_section(load_results([tmp_path / "r"]))
    assert not sec.tables and not sec.figures and not sec.notes
