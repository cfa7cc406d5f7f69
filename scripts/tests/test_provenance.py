"""A synthetic figure can never pass as a measurement: where a figure comes from (measured, synthetic,
imported) is a key of its file, a column of the tidy table, and said wherever the figure appears:
the report's banner and column labels, summary.md, compare, history, gate (Markdown, JUnit,
Prometheus), export and figures. Every figure here is synthetic (the point of the test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import synthetic
import synthetic_gate as G

from triaudit import commands as cli
from triaudit.results.case_info import SYNTHETIC_BANNER, provenance
from triaudit.results.table import load_results


def test_the_one_rule_of_where_a_file_comes_from():
    assert provenance({"triaudit_provenance": "measured", "gpu_name": "x"}) == "measured"
    assert provenance({"triaudit_provenance": "synthetic"}) == "synthetic"
    assert provenance({"synthetic": "true (test fixture, not a measurement)"}) == "synthetic"  # schema 1 fixtures
    assert provenance({"host_name": "synthetic-host"}) == "synthetic"
    assert provenance({"executable": "peer:nccl-tests", "gpu_available": "true"}) == "imported"
    assert provenance({"gpu_available": "true", "gpu_name": "NVIDIA H200"}) == "measured"
    assert provenance({}) == "measured"  # a plain Google Benchmark file: someone's measurement


@pytest.fixture
def two_runs(tmp_path) -> tuple[Path, Path]:
    runs = []
    for i, scale in enumerate((1.0, 0.9)):
        run = tmp_path / "results" / "nvidia-h200" / f"2026010{i + 1}T000000Z-synthetic"
        synthetic.write(
            run / "triaudit_stream_synthetic.json", synthetic.synthetic_corners_result("NVIDIA H200", scale)
        )
        (run / "manifest.json").write_text(json.dumps({"complete": True, "started_utc": f"2026010{i + 1}T000000Z"}))
        runs.append(run)
    return runs[0], runs[1]


def test_the_table_carries_it_and_the_report_says_it_first(two_runs, tmp_path, capsys):
    base, _ = two_runs
    assert set(load_results([base]).table["provenance"]) == {"synthetic"}
    out = tmp_path / "report"
    assert cli.main(["report", str(base), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    head = md.split("## ", 1)[0]
    assert SYNTHETIC_BANNER in head  # before the first section
    assert "| NVIDIA H200 (synthetic) |" in md and "| NVIDIA H200 |" not in md
    summary = (out / "summary.md").read_text()
    assert summary.index(SYNTHETIC_BANNER) < summary.index("## Headline figures")
    assert "<strong>SYNTHETIC, NOT MEASUREMENTS" in (out / "report.html").read_text()


def test_compare_history_export_and_figures_say_it(two_runs, tmp_path, capsys):
    base, new = two_runs
    cli.main(["compare", str(base), str(new)])
    assert SYNTHETIC_BANNER in capsys.readouterr().out
    cli.main(["history", str(base), str(new), "--out", str(tmp_path / "history")])
    assert SYNTHETIC_BANNER in capsys.readouterr().out
    assert set(__import__("pandas").read_csv(tmp_path / "history" / "history.csv")["provenance"]) == {"synthetic"}
    assert cli.main(["export", str(new), "--format", "bmf", "--out", str(tmp_path / "bmf")]) == 0
    assert SYNTHETIC_BANNER in capsys.readouterr().out
    bmf = json.loads((tmp_path / "bmf" / "bmf.json").read_text())
    assert {m["triaudit_provenance"] for case in bmf.values() for m in case.values()} == {"synthetic"}
    assert cli.main(["figures", str(new), "--json"]) == 0
    figs = json.loads(capsys.readouterr().out)["figures"]
    assert figs and {f["provenance"] for f in figs} == {"synthetic"}
    assert {f["card"] for f in figs} == {"NVIDIA H200 (synthetic)"}


def test_the_gate_says_it_in_markdown_junit_and_prometheus(tmp_path, capsys):
    G.node_run(tmp_path / "fleet", gpus=2)
    floors = G.synthetic_floors(tmp_path)
    junit, prom = tmp_path / "gate.xml", tmp_path / "gate.prom"
    cli.main(["gate", str(tmp_path / "fleet"), "--floors", floors, "--junit", str(junit), "--prom", str(prom)])
    md = capsys.readouterr().out
    assert md.index(SYNTHETIC_BANNER) < md.index("synthetic-node-0")
    assert '<property name="provenance" value="synthetic"' in junit.read_text()
    series = [line for line in prom.read_text().splitlines() if line.startswith("triaudit_hbm_bytes_per_second{")]
    assert series and all('provenance="synthetic"' in s for s in series)
