"""How `report` uses its process: the cyclic garbage collector paused while it works (and resumed
after, for callers in the same process), and everything it printed delivered."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from fresh_python import fresh_python
from synthetic import synthetic_corners_result, write

from triaudit.report import page as report
from triaudit.report import sections


def _results(tmp_path: Path) -> Path:
    run = tmp_path / "results" / "synthetic-card" / "20260101T000000Z-synthetic"
    run.mkdir(parents=True)
    write(run / "triaudit_synthetic.json", synthetic_corners_result("NVIDIA H100 80GB HBM3"))
    return tmp_path / "results"


def test_the_collector_is_paused_while_the_report_is_made_and_resumed_after(tmp_path, monkeypatch):
    seen = []
    real = sections.all_sections

    def watching(df, **kw):
        seen.append(gc.isenabled())
        return real(df, **kw)

    monkeypatch.setattr(sections, "all_sections", watching)
    assert gc.isenabled()
    report.write_report([_results(tmp_path)], tmp_path / "out")
    assert seen == [False]
    assert gc.isenabled()


def test_the_collector_is_resumed_after_a_report_that_fails(tmp_path):
    (tmp_path / "out").write_text("a file, not a folder")
    with pytest.raises(report.ReportError, match="not a folder"):
        report.write_report([_results(tmp_path)], tmp_path / "out")
    assert gc.isenabled()


def test_the_command_delivers_its_output_through_a_pipe(tmp_path):
    # What it printed must arrive through a pipe (block-buffered) as on a terminal.
    results = _results(tmp_path)
    p = fresh_python(
        "-m", "triaudit", "report", str(results), "--out", str(tmp_path / "out"), "--tidy-csv", timeout=300
    )
    assert p.returncode == 0, p.stderr
    wrote = [line.split(" ", 1)[1] for line in p.stdout.splitlines() if line.startswith("wrote ")]
    assert Path(wrote[0]).name == "report.md" and Path(wrote[-1]).name == "tidy.csv"
    assert all(Path(w).is_file() for w in wrote)
    assert (tmp_path / "out" / "report.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
