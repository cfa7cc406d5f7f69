"""The report's health table (report/sections/health.py) on synthetic results carrying the
harness's health_* counters (not measurements)."""

from __future__ import annotations

from synthetic import _entry, synthetic_context, write

from triaudit import commands as cli
from triaudit.report.sections.health import health_section
from triaudit.results.table import load_results

QUIET = {
    "health_ecc_corrected": 0.0,
    "health_ecc_uncorrected": 0.0,
    "health_pcie_replays": 0.0,
    "health_nvlink_replay_errors": 0.0,
    "health_xid_events": 0.0,
}


def _run(tmp_path, replays_in_p2p: float = 12000.0, broken: bool = True):
    ctx = synthetic_context("NVIDIA H200")
    ctx["health_counters"] = (
        "ecc_corrected: ok; ecc_uncorrected: ok; remapped_rows_correctable: NOT_SUPPORTED; "
        "remapped_rows_uncorrectable: NOT_SUPPORTED; pcie_replays: ok; nvlink_replay_errors: ok; xid_events: ok"
    )
    b = []
    for r in range(3):
        b.append(_entry("stream/triad/fp32/cache:cold/bytes:1073741824", 1e-3, r, 3, bytes_per_second=4.1e12, **QUIET))
        moved = dict(QUIET, health_nvlink_replay_errors=replays_in_p2p if r == 1 else 0.0)
        b.append(_entry("p2p/ce/uni/src:3/dst:5/bytes:536870912", 2e-3, r, 3, bytes_per_second=3.6e11, **moved))
    if broken:
        b.append(
            {
                "name": "gemm/ceiling/bf16/burst/manual_time",
                "run_name": "gemm/ceiling/bf16/burst/manual_time",
                "run_type": "iteration",
                "repetitions": 1,
                "repetition_index": 0,
                "error_occurred": True,
                "error_message": "health: GPU 0: 2 uncorrected ECC errors during the case: its figure is not trusted",
                "iterations": 0,
                "real_time": 0,
                "cpu_time": 0,
                "time_unit": "us",
            }
        )
    write(tmp_path / "r" / "synthetic_health.json", {"context": ctx, "benchmarks": b})
    return load_results([tmp_path / "r"])


def test_only_what_moved_or_is_unsupported_is_shown(tmp_path):
    sec = health_section(_run(tmp_path))
    (cap, per_gpu), (cap2, cases), (cap3, bad) = sec.tables
    col = per_gpu.columns[0]
    assert per_gpu.loc["NVLink replays", col] == "moved in 1 case(s), at most 12,000 in one call"
    assert per_gpu.loc["rows remapped (correctable)", col] == "not supported (NOT_SUPPORTED)"
    assert "PCIe replays" not in per_gpu.index and "corrected ECC errors" not in per_gpu.index  # quiet: left out
    assert list(cases.index.get_level_values("case")) == ["p2p/ce/uni/src:3/dst:5/bytes:536870912"]
    assert "2 uncorrected ECC errors" in bad["message"].iloc[0]


def test_a_quiet_run_with_every_counter_supported_has_no_table(tmp_path):
    rs = _run(tmp_path, replays_in_p2p=0.0, broken=False)
    for ctx in rs.contexts.values():
        ctx["health_counters"] = "ecc_corrected: ok; pcie_replays: ok"
    assert health_section(rs).tables == []


def test_the_report_shows_the_section(tmp_path):
    _run(tmp_path)
    assert cli.main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Health: hardware error counters" in md and "NVLink replays" in md
