"""The report as a reader sees it: rendered, opened in headless chromium at 1400 px, and checked
for what a reader would trip over (images that do not decode or are squeezed, text in a figure
smaller than 9 px or cut at its edge, empty table cells, literal `code` backticks, anything wider
than the window). The cards are synthetic (tests/synthetic_cards.py: model-based results under
the names the build's executables list), the page is real. A screenshot of each page is kept in
$TRIAUDIT_ARTIFACTS (or the test's tmp folder) for a person to look at."""

from __future__ import annotations

import os
from pathlib import Path

import browser
import pytest
from conftest import _build_dir
from synthetic_cards import catalogue, write_cards

from triaudit.report.page import write_report

pytestmark = pytest.mark.skipif(
    browser.chromium() is None, reason="chromium not installed (scripts/test.sh installs it)"
)


def _artifacts(tmp_path: Path) -> Path:
    d = Path(os.environ.get("TRIAUDIT_ARTIFACTS", tmp_path / "artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _names() -> dict[str, list[str]]:
    build = _build_dir()
    if not (build / "benchmarks" / "stream" / "triaudit_stream").exists():
        pytest.skip(f"{build} not built (scripts/test.sh builds it first)")
    return catalogue(build)


def _html(out: Path) -> Path:
    return out / "report.html"


def _assert_reads_well(found: dict) -> None:
    for key in ("empty_cells", "backticks", "overflow", "small_text", "text_cut"):
        assert found[key] == [], (key, found[key][:5])
    for img in found["images"]:
        assert img["natural"] > 0 and img["naturalHeight"] > 0, img  # decoded
        assert 0 < img["shown"] <= browser.WIDTH, img


def test_two_card_report_reads_well_in_a_browser(tmp_path):
    runs = write_cards(tmp_path / "runs", ["h200", "a100-sxm-80"], _names(), p2p_gpus=4)
    write_report(runs, tmp_path / "rep")
    found = browser.page_checks(_html(tmp_path / "rep"))
    _assert_reads_well(found)
    drawn = {img["src"] for img in found["images"]}
    # Every corner the synthetic cards have is drawn.
    for stem in (
        "summary_triangle",
        "stream_bandwidth",
        "gemm_by_precision",
        "memcpy_bandwidth",
        "launch_eager_vs_graph",
    ):
        assert any(stem in name for name in drawn), (stem, sorted(drawn))
    browser.screenshot(_html(tmp_path / "rep"), _artifacts(tmp_path) / "report_two_cards.png")


def test_a_corner_missing_for_one_card_says_so_in_its_cells(tmp_path):
    runs = write_cards(tmp_path / "runs", ["h200", "a100-sxm-80"], _names(), leave_out=("memcpy",))
    write_report(runs, tmp_path / "rep")
    found = browser.page_checks(_html(tmp_path / "rep"))
    _assert_reads_well(found)  # the missing card's cells say "not run", none is blank
    assert "not run" in (tmp_path / "rep" / "report.md").read_text()


def test_the_report_of_no_gpu_reads_well_in_a_browser(no_gpu_json, tmp_path):
    write_report([no_gpu_json], tmp_path / "rep")
    found = browser.page_checks(_html(tmp_path / "rep"))
    _assert_reads_well(found)
    assert found["images"] == []
    browser.screenshot(_html(tmp_path / "rep"), _artifacts(tmp_path) / "report_no_gpu.png", height=1000)


def test_the_checks_find_what_they_look_for(tmp_path):
    """The checks can fail: a hand-made page with each fault is caught, by kind."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<html><body><p>run `triaudit report`</p>"
        "<table><tr><td>1</td><td> </td></tr></table>"
        '<pre style="width:3000px">' + "x" * 400 + "</pre>"
        "</body></html>",
        encoding="utf-8",
    )
    found = browser.page_checks(page)
    assert found["backticks"] == ["run `triaudit report`"]
    assert len(found["empty_cells"]) == 1
    assert any(o["tag"] == "PRE" for o in found["overflow"])
