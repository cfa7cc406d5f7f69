"""The hash log as triaudit_soak's own code writes it (benchmarks/soak/soak_plan.cpp, through the
CPU test that writes sample records where TRIAUDIT_SOAK_RECORDS says) read by the Python reader
(soak/hashlog.py) and judged (soak/sdc.py): the two sides of the format agree."""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import _build_dir

from triaudit.soak.events import Tile
from triaudit.soak.hashlog import read_hash_log
from triaudit.soak.sdc import GpuHashes, find_sdc


@pytest.fixture
def records(tmp_path):
    exe = _build_dir() / "tests" / "triaudit_cpu_tests"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    path = tmp_path / "sample.hashes"
    p = subprocess.run(
        [str(exe), "--gtest_filter=SoakPlan.SampleRecordsForThePythonReader"],
        env=dict(os.environ, TRIAUDIT_SOAK_RECORDS=str(path)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0 and "[  PASSED  ] 1 test" in p.stdout, p.stdout + p.stderr
    return read_hash_log(path)


def test_the_executables_records_read_as_written(records):
    [ref] = records.references
    assert (ref.gpu_uuid, ref.gpu_name, ref.first_window) == (
        "GPU-5a4e7e7e-0000-0000-0000-000000000001",
        "NVIDIA H200",
        3,
    )
    assert (ref.rows, ref.cols, ref.tile_rows, ref.tile_cols) == (256, 256, 128, 128)
    assert ref.tiles == (0xE220A8397B1DCDAF, 1, 2, 3) and ref.combined == 0xE220A8397B1DCDAF ^ 1 ^ 2 ^ 3
    assert ref.tile_place(3) == (128, 128, 128, 128)
    [w] = records.windows
    assert (w.window, w.start_unix, w.end_unix) == (7, 1767226020.0, 1767226080.0)
    assert (w.sm_clock_mhz, w.power_w, w.temperature_c, w.throttled) == (1980.0, None, 71.0, True)  # -1: unknown
    gemm, triad = w.workloads["gemm"], w.workloads["triad"]
    assert (gemm.items, gemm.checked, gemm.deviating, gemm.last_hash) == (10, 10, 1, 0xE220A8397B1DCDAC)
    assert gemm.rate == pytest.approx(10 * 2 * 256**3 / 1e-3)
    [d] = gemm.deviations
    assert (d.item, d.time_unix, d.differing_tiles, d.diagnosis) == (
        42,
        1767226050.25,
        1,
        "tile 3: 1 of 16384 elements differ",
    )
    [t] = d.tiles
    assert (t.tile, t.row0, t.rows, t.col0, t.cols, t.got, t.expected) == (3, 128, 128, 128, 128, 0xABC, 3)
    assert triad.rate == pytest.approx(3.6e12) and triad.deviations == ()


def test_the_executables_records_make_one_event(records):
    g = GpuHashes(records.references[0].gpu_uuid, "1", "NVIDIA H200", records.references, records.windows)
    [e] = find_sdc([g], start_unix=1767225600.0)
    assert (e.kind, e.window, e.time_unix, e.tiles) == ("sdc", 7, 1767226050.25, (Tile(3, 128, 128, 128, 128),))
    assert "tile 3: 1 of 16384 elements differ" in e.detail
