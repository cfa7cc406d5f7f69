"""What `report` writes and how: the figures as PNG (one that cannot be drawn is said, not raised),
the corner CSVs and the optional tidy.csv as pandas writes them, and a folder that keeps nothing
stale, refuses what no report wrote, and is whole or untouched when the report stops midway.
Synthetic result files (made-up numbers in the executables' shape)."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from synthetic import synthetic_corners_result, synthetic_stream_result, write  # noqa: E402

from triaudit import commands as cli  # noqa: E402
from triaudit.report import figures, sections  # noqa: E402
from triaudit.report import page as report  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _results(tmp_path, card="Synthetic Card A"):
    run = tmp_path / "results" / "synthetic-a" / "20260101T000000Z-synthetic"
    write(run / "triaudit_corners_synthetic.json", synthetic_corners_result(card))
    write(run / "triaudit_stream_synthetic.json", synthetic_stream_result(card, 3000.0))
    return tmp_path / "results"


def test_every_figure_is_drawn_and_one_that_fails_is_said(tmp_path):
    good, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 10, 100], [1, 2, 3])
    ax.set_xscale("log")
    bad, ax2 = plt.subplots(figsize=(3, 2))
    ax2.text(0.5, 0.5, r"$\notacommand$")  # mathtext cannot parse it: savefig raises
    pngs = figures.render([("good", good), ("bad", bad)])
    assert pngs["good"].png.startswith(PNG)
    assert pngs["good"].width_px == 330 and pngs["good"].text_outside == []  # 3 in at 110 dpi, nothing cut
    assert pngs["good"].min_font_px > 9
    assert isinstance(pngs["bad"], str) and "\n" not in pngs["bad"] and "ValueError" in pngs["bad"]
    # Minor ticks at 2 and 5 per decade on log axes: the ticks matplotlib puts in one decade.
    ticks = ax.xaxis.get_minor_locator().tick_values(1, 10)
    assert [round(t, 6) for t in ticks if 1 < t < 10] == [2.0, 5.0]


def test_the_corner_csvs_and_tidy_csv_are_what_pandas_writes(tmp_path):
    res = _results(tmp_path)
    written = report.write_report([res], tmp_path / "rep", tidy_csv=True)
    rs, _ = report._frame([res])
    for s in sections.all_sections(rs):
        if s.csv is not None and not s.csv.empty:
            s.csv.to_csv(tmp_path / "expected.csv", index=False)
            assert (tmp_path / "rep" / f"{s.key}.csv").read_bytes() == (tmp_path / "expected.csv").read_bytes()
    columns = [c for c in rs.table.columns if c not in ("file", "run_dir")]
    rs.table.to_csv(tmp_path / "tidy_expected.csv", index=False, columns=columns)
    assert (tmp_path / "rep" / "tidy.csv").read_bytes() == (tmp_path / "tidy_expected.csv").read_bytes()
    assert tmp_path / "rep" / "tidy.csv" in written


def test_tidy_csv_only_when_asked(tmp_path, capsys):
    res = _results(tmp_path)
    assert cli.main(["report", str(res), "--out", str(tmp_path / "rep")]) == 0
    assert not (tmp_path / "rep" / "tidy.csv").exists()
    assert cli.main(["report", str(res), "--out", str(tmp_path / "rep"), "--tidy-csv"]) == 0
    assert (tmp_path / "rep" / "tidy.csv").is_file()


def test_a_reused_folder_keeps_nothing_stale_and_nothing_of_the_users_is_touched(tmp_path, capsys):
    res = _results(tmp_path)
    out = tmp_path / "rep"
    assert cli.main(["report", str(res), "--out", str(out), "--tidy-csv"]) == 0
    assert (out / "gemm.csv").is_file() and (out / "tidy.csv").is_file()
    (out / "my_notes.txt").write_text("mine")
    # The next report has no GEMM results and no tidy.csv: last time's are removed, the user's file stays.
    only_stream = tmp_path / "stream_only"
    write(only_stream / "r" / "triaudit_stream_synthetic.json", synthetic_stream_result("Synthetic Card A", 3000.0))
    assert cli.main(["report", str(only_stream), "--out", str(out)]) == 0
    assert not (out / "gemm.csv").exists() and not (out / "tidy.csv").exists() and not (out / "roofline.png").exists()
    assert (out / "stream.csv").is_file() and (out / "my_notes.txt").read_text() == "mine"
    listed = json.loads((out / ".triaudit-report.json").read_text())["files"]
    assert "stream.csv" in listed and "gemm.csv" not in listed
    assert not [p for p in out.iterdir() if p.name.startswith(".triaudit-report-")]  # no staging left


def test_a_file_of_the_same_name_no_report_wrote_is_refused(tmp_path, capsys):
    res = _results(tmp_path)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.md").write_text("my own notes, not a triaudit report\n")
    assert cli.main(["report", str(res), "--out", str(out)]) == 2
    assert "no triaudit report wrote" in capsys.readouterr().err
    assert (out / "report.md").read_text() == "my own notes, not a triaudit report\n"


def test_an_interrupted_report_leaves_the_previous_one_whole(tmp_path, monkeypatch, capsys):
    res = _results(tmp_path)
    out = tmp_path / "rep"
    assert cli.main(["report", str(res), "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(figures.Renderer, "results", interrupted)  # SIGINT while the figures are drawn
    assert cli.main(["report", str(res), "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert not [p for p in out.iterdir() if p.name.startswith(".triaudit-report-")]


@pytest.mark.parametrize("command", [["report", "X"], ["history", "X", "X"], ["export", "X", "--format", "bmf"]])
def test_an_empty_out_is_refused(tmp_path, capsys, command):
    argv = [str(tmp_path) if a == "X" else a for a in command] + ["--out", ""]
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2 and "--out" in capsys.readouterr().err
