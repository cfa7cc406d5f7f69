"""The report as a reader sees it: rendered, opened in headless chromium at 1400 px and at a phone's
390 px, and checked for what a reader would trip over: a page that does not fit (anything wider
than the window, no viewport), no way around it (fewer than 8 working links, a page over 16,000 px
with its sections folded), images that do not decode or text in a figure under 9 px or cut at its
edge, empty cells, literal `code` backticks, a card drawn in two colours or two cards in one (read
from each figure's own artists: report/figures.py card_colors). The cards are synthetic
(tests/synthetic_cards.py: model-based results under the names the build's executables list), four
and eight of them with 8-GPU p2p matrices, priced with synthetic prices made here; the page is real.
A screenshot of each page is kept in $TRIAUDIT_ARTIFACTS (or the test's tmp folder) for a person."""

from __future__ import annotations

import os
from pathlib import Path

import browser
import pytest
from conftest import _build_dir
from synthetic_cards import EIGHT_CARDS, catalogue, write_cards

from triaudit.report.page import write_report
from triaudit.report.sections.cost import load_prices

pytestmark = pytest.mark.skipif(
    browser.chromium() is None, reason="chromium not installed (scripts/test.sh installs it)"
)

FOUR_CARDS = ["a100-sxm-80", "h100-sxm", "h200", "rtx-4090"]  # the four (#41)
MAX_FOLDED_HEIGHT = 16_000  # px at 1400 px with every section after the summary folded
MIN_LINKS = 8


def _artifacts(tmp_path: Path) -> Path:
    d = Path(os.environ.get("TRIAUDIT_ARTIFACTS", tmp_path / "artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _names() -> dict[str, list[str]]:
    build = _build_dir()
    if not (build / "benchmarks" / "stream" / "triaudit_stream").exists():
        pytest.skip(f"{build} not built (scripts/test.sh builds it first)")
    return catalogue(build)


def _synthetic_prices(folder: Path, keys: list[str]) -> Path:
    """Rent per GPU-hour for each card: made-up test prices (triaudit ships none), named so."""
    rent = {k: round(0.5 + 0.4 * i, 2) for i, k in enumerate(keys)}
    p = folder / "synthetic_prices.toml"
    p.write_text("".join(f'[cards."{k}"]\nrent_per_hour = {v}\n\n' for k, v in rent.items()))
    return p


def _report(root: Path, keys: list[str], prices: bool = True) -> Path:
    runs = write_cards(root / "runs", keys, _names(), p2p_gpus=8)
    write_report(runs, root / "rep", prices=load_prices(_synthetic_prices(root, keys)) if prices else None)
    return root / "rep" / "report.html"


@pytest.fixture(scope="module")
def four(tmp_path_factory) -> Path:
    return _report(tmp_path_factory.mktemp("four"), FOUR_CARDS)


@pytest.fixture(scope="module")
def eight(tmp_path_factory) -> Path:
    return _report(tmp_path_factory.mktemp("eight"), EIGHT_CARDS)


def _assert_reads_well(found: dict, width: int = browser.WIDTH) -> None:
    for key in ("empty_cells", "backticks", "overflow", "small_text", "text_cut"):
        assert found[key] == [], (key, found[key][:5])
    assert found["width"] == width  # the window is what it is said to be (a phone: the frame)
    for img in found["images"]:
        assert img["natural"] > 0 and img["naturalHeight"] > 0, img  # decoded
        assert 0 < img["shown"] <= max(img["natural"], 1), img


def _assert_one_colour_per_card(found: dict, cards: int) -> dict[str, str]:
    """Each figure drew each card in one colour, the same in every figure, and no two cards alike."""
    seen: dict[str, str] = {}
    drawn = [img for img in found["images"] if img["card_colors"]]
    assert len(drawn) >= 6, [img["src"] for img in found["images"]]  # the summary's, STREAM, GEMM, copies ...
    for img in drawn:
        for card, colours in img["card_colors"].items():
            assert len(colours) == 1, (img["src"], card, colours)  # one colour for a card within a figure
            assert seen.setdefault(card, colours[0]) == colours[0], (img["src"], card, colours, seen[card])
        mine = [c[0] for c in img["card_colors"].values()]
        assert len(set(mine)) == len(mine), (img["src"], img["card_colors"])  # two cards never alike
    assert 0 < len(seen) <= cards
    return seen


@pytest.mark.parametrize("width", [browser.WIDTH, browser.PHONE])
def test_four_cards_read_well_on_a_screen_and_a_phone(four, width, tmp_path):
    found = browser.page_checks(four, width)
    _assert_reads_well(found, width)
    assert found["viewport"] and found["details"] >= 8 and found["details_open"] == 0  # every section folds
    assert found["links"] >= MIN_LINKS and found["dead_links"] == []
    colours = _assert_one_colour_per_card(found, 4)
    assert len(colours) == 4
    if width == browser.WIDTH:
        assert found["folded_height"] <= MAX_FOLDED_HEIGHT, found["folded_height"]
        # The per-dollar answer and the contents sit beside the headline table, on the first screen.
        assert found["aside"]["left"] > found["lead_table"]["right"] - 1 and found["aside"]["top"] < 700
        assert "Per dollar" in found["aside"]["text"]
    drawn = {img["src"] for img in found["images"]}
    for stem in ("summary_triangle", "stream_bandwidth", "gemm_by_precision", "memcpy_bandwidth", "roofline"):
        assert stem in drawn, (stem, sorted(drawn))
    browser.screenshot(four, _artifacts(tmp_path) / f"report_four_cards_{width}.png", height=3000, width=width)


@pytest.mark.parametrize("width", [browser.WIDTH, browser.PHONE])
def test_eight_cards_read_well_on_a_screen_and_a_phone(eight, width, tmp_path):
    found = browser.page_checks(eight, width)
    _assert_reads_well(found, width)
    assert found["viewport"] and found["links"] >= MIN_LINKS and found["dead_links"] == []
    _assert_one_colour_per_card(found, 8)
    if width == browser.WIDTH:
        assert found["folded_height"] <= MAX_FOLDED_HEIGHT, found["folded_height"]
    browser.screenshot(eight, _artifacts(tmp_path) / f"report_eight_cards_{width}.png", height=3000, width=width)


def test_a_corner_missing_for_one_card_says_so_in_its_cells(tmp_path):
    runs = write_cards(tmp_path / "runs", ["h200", "a100-sxm-80"], _names(), leave_out=("memcpy",))
    write_report(runs, tmp_path / "rep")
    found = browser.page_checks(tmp_path / "rep" / "report.html")
    _assert_reads_well(found)  # the missing card's cells say "not run", none is blank
    assert "not run" in (tmp_path / "rep" / "report.md").read_text()
    # Without prices, the place of the per-dollar answer says how to get one.
    assert "--prices prices.toml" in found["aside"]["text"]


def test_the_report_of_no_gpu_reads_well_in_a_browser(no_gpu_json, tmp_path):
    write_report([no_gpu_json], tmp_path / "rep")
    for width in (browser.WIDTH, browser.PHONE):
        found = browser.page_checks(tmp_path / "rep" / "report.html", width)
        _assert_reads_well(found, width)
        assert found["images"] == [] and found["viewport"]
    browser.screenshot(tmp_path / "rep" / "report.html", _artifacts(tmp_path) / "report_no_gpu.png", height=1400)


def test_the_checks_find_what_they_look_for(tmp_path):
    """The checks can fail: a hand-made page with each fault is caught, by kind."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<html><body><p>run `triaudit report`</p>"
        "<table><tr><th></th><td>1</td><td> </td></tr></table>"
        '<pre style="width:3000px">' + "x" * 400 + "</pre>"
        "<div class='scroll' style='overflow-x:auto'><table style='width:3000px'><tr><td>wide, in its box</td>"
        "</tr></table></div><a href='#nowhere'>a dead link</a>"
        "</body></html>",
        encoding="utf-8",
    )
    for width in (browser.WIDTH, browser.PHONE):
        found = browser.page_checks(page, width)
        assert found["backticks"] == ["run `triaudit report`"]
        assert len(found["empty_cells"]) == 2  # the blank td and the blank th
        assert any(o["tag"] == "PRE" for o in found["overflow"])
        assert not any("in its box" in o["text"] for o in found["overflow"])  # a scrolling box is allowed
        assert not found["viewport"] and found["links"] == 0 and found["dead_links"] == ["nowhere"]
        assert found["width"] == width
