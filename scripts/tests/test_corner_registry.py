"""The corner registry (corners/) is the one list the runner, the time model, doctor and the report
agree on: every corner has its executable built by CMake, a time model, a report section, and
arguments in every profile for each of its steps."""

from __future__ import annotations

from triaudit.corners import CORNERS, EXECUTABLES, RUN_CORNERS, STEPS
from triaudit.runner import profiles


def test_every_corner_has_a_time_model_and_a_report_section():
    from triaudit.report.sections import SECTION_BUILDERS

    for c in RUN_CORNERS:
        assert callable(c.time_model), c
    for c in CORNERS:
        assert c.section in SECTION_BUILDERS, c


def test_every_step_of_every_profile_is_a_corners_and_every_corners_step_is_in_every_profile():
    steps = {s for s, _ in STEPS}
    for name, by_step in profiles.PROFILES.items():
        assert set(by_step) == steps, name


def test_the_ladder_step_comes_last_and_doctor_checks_every_executable():
    assert STEPS[-1][0] == "triaudit_gemm_ladder"
    assert "triaudit_p2p" in EXECUTABLES  # doctor's own list used to lack it
    from triaudit.doctor import checks

    assert checks.EXECUTABLES is EXECUTABLES


def test_the_executables_are_the_ones_cmake_builds():
    import re

    from conftest import REPO

    cmake = "".join(p.read_text() for p in (REPO / "benchmarks").rglob("CMakeLists.txt"))
    built = set(re.findall(r"add_executable\((triaudit_[a-z0-9_]+)", cmake))
    # the collectives: made by the function triaudit_collective(<name>), one per collective
    built |= {f"triaudit_{c}" for c in re.findall(r"^\s*triaudit_collective\(([a-z0-9_]+)\)", cmake, re.M)}
    assert set(EXECUTABLES) <= built, set(EXECUTABLES) - built
