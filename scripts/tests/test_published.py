"""The published-figures section, on synthetic runs (made-up numbers in the executables' shape)."""

from synthetic import synthetic_corners_result, synthetic_stream_result, write

from triaudit import commands as cli
from triaudit.core.specs import CARDS
from triaudit.report.published import FIGURES, GENERIC, PUBLISHED, Published, comparison_table, ratio_to
from triaudit.results.table import load_table


def test_every_published_figure_has_a_reader_and_a_known_card():
    keys = {c.key for c in CARDS}
    assert set(PUBLISHED) <= keys
    for p in [p for ps in PUBLISHED.values() for p in ps] + GENERIC:
        assert p.figure in FIGURES and p.low <= p.high and p.source


def test_ratio_is_one_inside_a_range_and_against_the_nearest_end_outside():
    p = Published("x", 770, 800, "s")
    assert ratio_to(p, 785) == 1.0
    assert abs(ratio_to(p, 693) - 0.9) < 1e-12
    assert abs(ratio_to(p, 880) - 1.1) < 1e-12


def test_h200_run_beside_its_published_figures(tmp_path):
    run = tmp_path / "results" / "synthetic-h200"
    write(run / "synthetic_stream.json", synthetic_stream_result("NVIDIA H200", hbm_gbps=3735))
    write(run / "synthetic_corners.json", synthetic_corners_result("NVIDIA H200"))
    t = comparison_table(load_table(sorted(run.glob("*.json"))))
    rows = {fig: r for (card, fig), r in t.iterrows()}
    triad = rows["STREAM triad, HBM (GB/s)"]
    assert triad["published"] == "4150" and triad["measured ÷ published"] == "0.90"
    assert "L2 flushed" in triad["where"]
    # 780 TFLOP/s lies inside the published 770-800 for 8192³: ratio 1.
    assert rows["BF16 GEMM 8192³ (TFLOP/s)"]["measured ÷ published"] == "1.00"
    # d2d: our counter counts bytes once; the published figure counts read + write.
    assert rows["device to device, copy engine (GB/s)"]["measured"] == "4,200"
    assert "not confirmed" in rows["host to device, pinned (GB/s)"]["published"]
    assert rows["CUDA Graph, per kernel (µs)"]["measured ÷ published"] == "1.00"


def test_unknown_card_gets_only_the_generic_launch_figures(tmp_path):
    write(tmp_path / "synthetic_x.json", synthetic_corners_result("Synthetic Card Z"))
    t = comparison_table(load_table([tmp_path / "synthetic_x.json"]))
    assert {fig for _, fig in t.index} <= {f"{FIGURES[p.figure][0]} ({FIGURES[p.figure][1]})" for p in GENERIC}


def test_report_has_the_section(tmp_path):
    write(tmp_path / "r" / "synthetic_corners.json", synthetic_corners_result("NVIDIA H200"))
    assert cli.main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Against published measurements" in md and "mamf-finder" not in md  # H200 cites no mamf figure
    assert (tmp_path / "rep" / "published.csv").exists()


def test_a_report_with_nothing_measured_shows_the_published_figures_as_theirs(tmp_path):
    """The first run on a machine without a GPU: the four cards' published measurements as the
    cross-card table, every one with its numbered source, the columns saying "published"; nothing
    in it is a figure of ours (fails on 3ffa9c5: three sentences and no table)."""
    from triaudit.report.sections.published import REFERENCE_CARDS, reference_table

    (tmp_path / "results").mkdir()
    out = tmp_path / "rep"
    assert cli.main(["report", str(tmp_path / "results"), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    t = reference_table()
    assert list(t.columns) == [
        "A100 SXM4 80GB (published)",
        "H100 SXM5 80GB (published)",
        "H200 SXM 141GB (published)",
        "RTX 4090 (published)",
    ]
    cells = [c for c in t.to_numpy().ravel() if c != "no published figure"]
    assert len(cells) == sum(len(PUBLISHED[k]) for k in REFERENCE_CARDS)  # every published figure, once
    notes = t.attrs["notes"]
    for cell in cells:
        ref = int(cell.rsplit("[", 1)[1].rstrip("]"))
        assert 1 <= ref <= len(notes)  # each cites its source
    for key in REFERENCE_CARDS:
        for p in PUBLISHED[key]:
            assert p.source in md  # named in the report
    assert "| figure | A100 SXM4 80GB (published) | H100 SXM5 80GB (published) |" in md
    assert "55 (expected, not measured)" in md  # an expectation is not passed off as a measurement
    assert "NOT measured by triaudit" in md
