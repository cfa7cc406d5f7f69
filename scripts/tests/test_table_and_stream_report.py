import pytest
from synthetic import synthetic_stream_result, write

from triaudit.report import page as report
from triaudit.report import sections
from triaudit.report.sections import stream as stream_report
from triaudit.results.table import load_results, load_table


@pytest.fixture
def two_cards(tmp_path):
    a = write(
        tmp_path / "card-a" / "run1" / "synthetic_stream_card_a.json",
        synthetic_stream_result(
            "Synthetic Card A",
            hbm_gbps=4000,
            l2_bytes=50 * 2**20,
            peak=4.8e12,
            skipped=("stream/copy/fp32/cache:cold/bytes:1073741824",),
        ),
    )
    b = write(
        tmp_path / "card-b" / "run1" / "synthetic_stream_card_b.json",
        synthetic_stream_result("Synthetic Card B", hbm_gbps=1700, l2_bytes=40 * 2**20, peak=2.0e12),
    )
    return [a, b]


def test_tidy_table_medians_and_spread(two_cards):
    df = load_table(two_cards)
    row = df[
        (df["card"] == "Synthetic Card A")
        & (df["case"] == "stream/triad/fp32/cache:cold/bytes:268435456")
        & (df["metric"] == "bytes_per_second")
    ].iloc[0]
    # Repetitions at 0.99x, 1.00x, 1.01x of 4000 GB/s.
    assert row["median"] == pytest.approx(4000e9)
    assert row["min"] == pytest.approx(3960e9) and row["max"] == pytest.approx(4040e9)
    assert row["spread_pct"] == pytest.approx(2.0)
    assert row["reps"] == 3
    assert row["op"] == "triad" and row["variant"] == "fp32" and row["cache"] == "cold" and row["bytes"] == "268435456"
    skipped = df[df["status"] == "skipped"]
    assert len(skipped) == 1 and "needs 3 GiB" in skipped.iloc[0]["message"]


def test_markdown_has_cards_as_columns_and_hbm_values(two_cards, tmp_path):
    report.write_report(two_cards, tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| op | type |"))
    assert "Synthetic Card A" in header and "Synthetic Card B" in header
    triad = next(line for line in md.splitlines() if line.startswith("| triad | fp32 |"))
    assert "4,000 ±1.0% (83%)" in triad and "1,700 ±1.0% (85%)" in triad
    assert "L2-resident" in md and "12,000" in md  # hot, inside the L2: 3x
    assert "1 case(s) skipped" in md
    # The datasheet comparison: neither synthetic card is known, so no datasheet fraction.
    assert "No datasheet figures for Synthetic Card A, Synthetic Card B" in md


def test_csv_has_every_size_per_card(two_cards):
    csv = stream_report.csv_table(load_table(two_cards))
    assert {"op", "type", "cache", "bytes", "Synthetic Card A GB/s", "Synthetic Card B GB/s"} <= set(csv.columns)
    assert len(csv) == 2 * 2 * 2 * 3  # ops x types x caches x sizes
    cell = csv[(csv["op"] == "copy") & (csv["type"] == "fp64") & (csv["cache"] == "cold") & (csv["bytes"] == 2**28)]
    assert cell["Synthetic Card B GB/s"].iloc[0] == pytest.approx(1700)


def test_plot_has_a_line_per_card_and_op_and_marks_l2(two_cards):
    rs = load_results(two_cards)
    fig = stream_report.plot_figure(rs.table, rs.contexts)
    axes = fig.get_axes()
    assert len(axes) == 4
    titles = {ax.get_title() for ax in axes}
    assert any("fp32, cold" in t for t in titles) and any("fp64, hot" in t for t in titles)
    ax = axes[0]
    labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert {"Synthetic Card A: copy", "Synthetic Card A: triad", "Synthetic Card B: copy"} <= set(labels)
    verticals = [
        line for line in ax.get_lines() if line.get_label().startswith("_") and len(set(line.get_xdata())) == 1
    ]
    assert sorted(round(v.get_xdata()[0] / 2**20) for v in verticals) == [40, 50]  # L2 sizes (bytes)
    assert "working set" in ax.get_xlabel() and "bytes/s" in ax.get_ylabel() and ax.get_xscale() == "log"
    # The ticks say sizes and rates a reader reads without counting digits.
    fig.canvas.draw()
    xticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    yticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert any(t.endswith("MiB") for t in xticks), xticks
    assert any(t.endswith(" T") for t in yticks), yticks  # the unit (bytes/s) is in the label


def test_no_gpu_output_renders_an_honest_empty_report(no_gpu_json):
    rs = load_results([no_gpu_json])
    df = rs.table
    assert set(df["card"]) == {"no GPU"}
    assert stream_report.stream_frame(df).empty
    sec = sections.stream.stream_section(rs)
    assert not sec.tables
    assert any("skipped" in n and "no CUDA device" in n for n in sec.notes)
    assert stream_report.plot_figure(df, rs.contexts) is None


def test_records_are_the_rows_to_dict_gives():
    # table.records replaces DataFrame.to_dict("records") in the report's per-row loops: the same
    # dicts, values of the same types (numbers as Python numbers, missing as NaN), column by column.
    import math

    import numpy as np
    import pandas as pd

    from triaudit.results.table import plain, records

    frame = pd.DataFrame(
        {
            "card": pd.Categorical(["b", None, "a"]),
            "median": [1.5, math.nan, 3.0],
            "reps": np.array([5, 3, 1], dtype=np.int64),
            "complete": [True, False, True],
            "counters": [{"watts_mean": (1.0,)}, {}, {"x": (2.0,)}],
            "note": ["x", None, "z"],
        }
    )
    for f in (frame, plain(frame), plain(frame).iloc[[2, 0]], frame.iloc[0:0]):
        got, want = records(f), f.to_dict("records")
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert list(g) == list(w)
            for k in w:
                same = g[k] == w[k] or (g[k] != g[k] and w[k] != w[k])
                assert same and type(g[k]) is type(w[k]), (k, g[k], w[k])
