"""The page's structure without a browser (report/html.py, page.py, frames.footnote_reasons): the
first screen, folding sections with ids the contents link to, one self-contained file, a reason
said once under a table. On synthetic result files (synthetic.py), named so."""

from __future__ import annotations

import re

import pandas as pd
from synthetic import synthetic_corners_result, synthetic_stream_result, write

from triaudit import commands as cli
from triaudit.report import frames as F
from triaudit.report import html as H


def _results(tmp_path):
    for card, bw in (("NVIDIA H200", 4100), ("NVIDIA H100 80GB HBM3", 2900)):
        d = tmp_path / "results" / card.lower().replace(" ", "-") / "20260101T000000Z-synthetic"
        write(d / "synthetic_corners.json", synthetic_corners_result(card))
        write(d / "synthetic_stream.json", synthetic_stream_result(card, hbm_gbps=bw, peak=4.8e12, reps=5))
    return tmp_path / "results"


def test_the_page_opens_with_the_summary_and_folds_every_other_section(tmp_path):
    out = tmp_path / "rep"
    assert cli.main(["report", str(_results(tmp_path)), "--out", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "<meta name='viewport' content='width=device-width, initial-scale=1'>" in page
    # One self-contained file: no script, no stylesheet, font or image fetched from anywhere.
    assert "<script" not in page and not re.search(r"(src|href)=['\"](https?:|//)", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    ids = re.findall(r"<details id='([^']+)'>", page)
    links = re.findall(r"<a href='#([^']+)'>", page)
    assert len(ids) >= 4 and "<details open" not in page  # folded
    assert set(ids) <= set(links) and set(links) <= set(ids) | {"summary"}  # each listed, none dead
    assert page.index("<section id='summary'>") < page.index("<details")
    assert page.index("<aside class='side'>") < page.index("<details")  # the aside is on the first screen
    md = (out / "report.md").read_text()
    runs = [line for line in md.splitlines() if line.startswith("Runs: ")]
    sections = [line for line in md.splitlines() if line.startswith("## ")]
    assert 0 < len(runs) <= len(sections)  # once per section, not under every table


def test_a_reason_repeated_in_a_table_is_said_once_under_it():
    why = "skipped: FP8 needs compute capability 8.9 or newer"
    t = pd.DataFrame({"A100": [why, why, why, "1.00"], "H200": ["1", "2", "3", why]}, index=list("abcd"))
    got = F.footnote_reasons(t, {why})
    assert list(got["A100"]) == ["skipped (a)"] * 3 + ["1.00"]
    assert got.loc["d", "H200"] == "skipped (a)"
    assert got.attrs["notes"] == [f"(a) {why} — 4 cells of A100, H200."]
    twice = pd.DataFrame({"A100": [why, why]})
    assert F.footnote_reasons(twice, {why}).equals(twice)  # two are left where they are


def test_inline_text_renders_code_and_bold_and_escapes_the_rest():
    assert H.inline("**SYNTHETIC** run `triaudit report` <now>") == (
        "<strong>SYNTHETIC</strong> run <code>triaudit report</code> &lt;now&gt;"
    )
    assert H.anchor("allreduce_scaling") == "allreduce-scaling"
