"""doctor's hardware error totals (doctor/health.py), on synthetic nvidia-smi outputs written in
its CSV shape (not recordings of real cards)."""

import pytest
from test_doctor import SYNTHETIC_H200

from triaudit.doctor import checks as doctor
from triaudit.doctor import health

SYNTHETIC_HEALTHY = "0, 0, 0, [N/A], [N/A], [N/A]"
SYNTHETIC_REMAP_OK = "00000000:19:00.0, 0, 0, No, No"


@pytest.fixture
def build_dir(stream_exe):
    return stream_exe.parents[2]


def _diagnose(build_dir, health_csv, remap_csv, smi=SYNTHETIC_H200):
    return doctor.diagnose(
        build_dir, smi_csv=smi, driver_cuda="13.0", processes="", nvlink="", health=(health_csv, remap_csv)
    )


def test_a_healthy_gpu_says_its_counts_and_what_it_does_not_support(build_dir):
    r = _diagnose(build_dir, SYNTHETIC_HEALTHY, SYNTHETIC_REMAP_OK)
    row = r.sections["health"]["GPU 0"]
    assert "corrected 0, uncorrected 0" in row
    assert "remapped rows: correctable 0, uncorrectable 0, pending False, failure False" in row
    assert "retired pages" not in row  # [N/A] on a remapping GPU: not said as zeros
    assert not [p for p in r.problems if "ECC" in p or "remap" in p or "repair" in p]
    assert doctor.exit_code(r) == 0


def test_uncorrected_errors_and_a_pending_remap_are_problems(build_dir):
    r = _diagnose(build_dir, "0, 12, 2, [N/A], [N/A], [N/A]", "00000000:19:00.0, 3, 1, Yes, No")
    assert "GPU 0: 2 uncorrected ECC error(s) since the driver loaded" in r.problems
    assert any("pending: the GPU needs a reset" in p for p in r.problems)
    assert "GPU 0: 12 corrected ECC error(s) since the driver loaded" in r.warnings
    assert doctor.exit_code(r) == 1


def test_a_failed_remap_and_old_parts_retired_pages(build_dir):
    rows, problems, warnings = health.judge(
        "0, 0, 0, [N/A], [N/A], [N/A]\n1, 0, 0, 3, 1, Yes",
        "00000000:19:00.0, 0, 0, No, Yes",
        {"0": "00000000:19:00.0", "1": "00000000:3B:00.0"},
    )
    assert any("row remap failed" in p for p in problems)
    assert "retired pages: single-bit 3, double-bit 1" in rows["GPU 1"]
    assert any(p.startswith("GPU 1: a memory repair") for p in problems)
    assert warnings == []


def test_geforce_boards_without_ecc_are_not_supported_never_zero():
    rows, problems, warnings = health.judge("0, [N/A], [N/A], [N/A], [N/A], [N/A]", "", {"0": "00000000:01:00.0"})
    assert rows["GPU 0"] == "ECC since the driver loaded: corrected not supported, uncorrected not supported"
    assert problems == [] and warnings == []
