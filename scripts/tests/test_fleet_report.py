"""The report's fleet section on synthetic per-GPU result sets."""

from __future__ import annotations

import json

import pandas as pd
import synthetic
from synthetic_fleet import uuid_of
from test_outliers import TRIAD, fleet

from triaudit.report import page as report


def test_fleet_section_marks_the_slow_gpu(tmp_path):
    root = fleet(tmp_path / "synthetic-fleet", slow={(0, 6): 0.15})
    (root / "hosts").mkdir()
    (root / "hosts" / "20260101T000000Z-synthetic-node-7.status").write_text(
        json.dumps(
            {
                "host": "synthetic-node-7",
                "node": "synthetic-node-7",
                "state": "no CUDA device",
                "exit_code": 77,
                "message": "no CUDA device (cudaErrorNoDevice: no CUDA-capable device is detected)",
            }
        )
    )
    out = tmp_path / "report"
    written = report.write_report([root], out)
    md = (out / "report.md").read_text()
    assert "## Fleet: every GPU against its siblings" in md
    row = next(line for line in md.splitlines() if line.startswith("| synthetic-node-0 | 6 |"))
    assert TRIAD in row
    assert 14.0 < float(row.split("|")[-3].strip().rstrip(" %")) < 16.0  # the deficit column: 15 % slow, +-1 % noise
    assert "| NVIDIA H100 80GB HBM3 | 550.54.15 | 16 | 2 | 2 | 2 | 1 |" in md
    assert "synthetic-node-7: no CUDA device (exit 77)" in md
    png = out / "fleet_nvidia_h100_80gb_hbm3_550_54_15.png"
    assert png in written and png.stat().st_size > 10_000
    csv = pd.read_csv(out / "fleet.csv")
    assert len(csv) == 32 and csv["outlier"].sum() == 1
    slow = csv[csv["outlier"]].iloc[0]
    assert (slow["host"], slow["gpu_index"], slow["gpu_uuid"]) == ("synthetic-node-0", 6, uuid_of(0, 6, slow_family()))


def slow_family() -> int:
    import zlib

    return zlib.crc32(b"synthetic-node") % 65536


def test_single_card_report_has_no_fleet_section(tmp_path):
    f = synthetic.write(
        tmp_path / "r" / "h100.synthetic.json", synthetic.synthetic_stream_result("NVIDIA H100 80GB HBM3", 3000)
    )
    report.write_report([f.parent], tmp_path / "out")
    assert "Fleet" not in (tmp_path / "out" / "report.md").read_text()
    assert not (tmp_path / "out" / "fleet.csv").exists()
