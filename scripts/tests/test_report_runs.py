"""report over real-shaped run folders: the newest run per card, --all-runs, conflicts across files,
symlinks, the empty report, the real catalogue's names."""

import json
import os
import re

from synthetic import _entry, synthetic_context, synthetic_stream_result, write

from triaudit import commands as cli


def _stream_run(root, card_dir, name, card, gbps, manifest=None):
    d = root / card_dir / name
    write(d / "synthetic_stream.json", synthetic_stream_result(card, hbm_gbps=gbps, peak=4.8e12, reps=5))
    (d / "manifest.json").write_text(
        json.dumps(
            manifest
            if manifest is not None
            else {
                "complete": True,
                "started_utc": name[:16],
                "host": "synthetic-host",
                "git_commit": "abc123" + name[6:8],
            }
        )
    )
    return d


def _triad_line(md: str) -> str:
    return next(line for line in md.splitlines() if line.startswith("| triad | fp32 |"))


def test_report_shows_the_newest_run_of_a_card_and_names_it(tmp_path):
    results = tmp_path / "results"
    _stream_run(results, "nvidia-h200", "20260101T000000Z-synthetic", "NVIDIA H200", 4000)
    _stream_run(results, "nvidia-h200", "20260102T000000Z-synthetic", "NVIDIA H200", 4200)
    out = tmp_path / "rep"
    assert cli.main(["report", str(results), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "4,200 ±" in _triad_line(md) or "4200 ±" in _triad_line(md)
    assert "4000" not in _triad_line(md) and "4,000" not in _triad_line(md)
    assert "20260102T000000Z-synthetic (started 20260102T000000Z, host synthetic-host, commit abc12302)" in md
    assert "1 older run(s) left out (20260101T000000Z-synthetic" in md and "--all-runs" in md


def test_all_runs_gives_each_run_its_own_column(tmp_path):
    results = tmp_path / "results"
    _stream_run(results, "nvidia-h200", "20260101T000000Z-synthetic", "NVIDIA H200", 4000)
    _stream_run(results, "nvidia-h200", "20260102T000000Z-synthetic", "NVIDIA H200", 4200)
    out = tmp_path / "rep"
    assert cli.main(["report", str(results), "--out", str(out), "--all-runs"]) == 0
    md = (out / "report.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| op | type |"))
    assert "NVIDIA H200 · 20260101T000000Z-synthetic" in header and "NVIDIA H200 · 20260102T000000Z-synthetic" in header
    line = _triad_line(md)
    assert line.index("4,000") < line.index("4,200") if "4,000" in line else line.index("4000") < line.index("4200")
    # The datasheet still knows the card behind the run's column.
    assert "(83%)" in line and "(88%)" in line


def test_an_interrupted_newer_run_does_not_hide_the_complete_one(tmp_path):
    results = tmp_path / "results"
    _stream_run(results, "h", "20260101T000000Z-synthetic", "NVIDIA H200", 4000)
    _stream_run(
        results,
        "h",
        "20260102T000000Z-synthetic",
        "NVIDIA H200",
        1000,
        manifest={"complete": False, "started_utc": "20260102T000000Z"},
    )
    out = tmp_path / "rep"
    assert cli.main(["report", str(results), "--out", str(out)]) == 0
    line = _triad_line((out / "report.md").read_text())
    assert "4,000" in line or "4000" in line


def test_a_case_in_two_files_of_one_run_is_a_conflict_naming_both(tmp_path):
    run = tmp_path / "results" / "h" / "20260101T000000Z-synthetic"
    write(run / "a_synthetic.json", synthetic_stream_result("NVIDIA H200", hbm_gbps=4000, ops=("triad",)))
    write(run / "b_synthetic.json", synthetic_stream_result("NVIDIA H200", hbm_gbps=400, ops=("triad",)))
    out = tmp_path / "rep"
    assert cli.main(["report", str(run), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "conflict" in md and "a_synthetic.json" in md and "b_synthetic.json" in md
    assert "| triad | fp32 |" not in md  # no number from either
    # What was not measured is counted by status, and only statuses that occur are named.
    assert "No case was measured: 24 error; the reasons are under each corner below." in md


def test_symlink_loop_and_dangling_link_in_a_results_folder_are_skipped_and_named(tmp_path, capsys):
    results = tmp_path / "results"
    _stream_run(results, "h", "20260101T000000Z-synthetic", "NVIDIA H200", 4000)
    os.symlink("loop.json", results / "loop.json")
    os.symlink("nowhere.json", results / "dangling.json")
    out = tmp_path / "rep"
    assert cli.main(["report", str(results), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "loop.json: a symbolic link loop, skipped" in md
    assert "dangling.json: a dangling symbolic link (to nowhere.json), skipped" in md
    # Named on the command line, the same links are refused with the reason, exit 2.
    assert cli.main(["report", str(results / "loop.json"), "--out", str(out)]) == 2
    assert "symbolic link loop" in capsys.readouterr().err


def test_out_naming_an_existing_file_is_refused(tmp_path, capsys):
    run = _stream_run(tmp_path / "results", "h", "20260101T000000Z-synthetic", "NVIDIA H200", 4000)
    target = tmp_path / "not_a_folder.txt"
    target.write_text("keep me")
    assert cli.main(["report", str(run), "--out", str(target)]) == 2
    assert "not_a_folder.txt" in capsys.readouterr().err and target.read_text() == "keep me"


def test_empty_report_says_why_what_and_when(tmp_path):
    out = tmp_path / "rep"
    (tmp_path / "results").mkdir()
    assert cli.main(["report", str(tmp_path / "results"), "--out", str(out), "--tidy-csv"]) == 0
    md = (out / "report.md").read_text()
    # One paragraph saying what to run, and when the report was made; then other people's published
    # figures of four cards, labelled as theirs, and how to measure or import (sections/published.py).
    paragraphs = [p for p in md.split("\n\n") if p.strip()]
    assert paragraphs[2].startswith("No results yet") and "`triaudit run`" in paragraphs[2]
    assert paragraphs[3] == "## Published measurements of four cards (other people's, not ours)"
    assert [p for p in paragraphs if p.startswith("## ")] == [paragraphs[3]]
    assert "NOT measured by triaudit" in md and "`bash scripts/main.sh`" in md and "triaudit import" in md
    assert re.search(r"Made \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC by triaudit [\d.]+, commit \S+", md)
    assert sorted(p.name for p in out.iterdir()) == [".triaudit-report.json", "report.html", "report.md", "tidy.csv"]
    tidy = (out / "tidy.csv").read_text()
    assert tidy.startswith("card,run,") and len(tidy.splitlines()) == 1


def test_empty_report_on_a_machine_without_gpu_says_so(no_gpu_json, tmp_path):
    out = tmp_path / "rep"
    assert cli.main(["report", str(no_gpu_json), "--out", str(out), "--tidy-csv"]) == 0
    md = (out / "report.md").read_text()
    assert "without a usable GPU" in md and "no CUDA device" in md
    assert (out / "tidy.csv").read_text().startswith("card,run,")


def test_the_catalogue_s_chain_fit_name_does_not_break_the_published_section(tmp_path):
    # launch/chain_fit/<variant>/kernels:1-1000 is the real name; its "kernels" is a range.
    b = []
    for r in range(5):
        b.append(_entry("launch/chain_fit/graph/kernels:1-1000", 1e-3, r, 5, per_kernel_s=0.5e-6, fixed_s=4e-6))
        b.append(_entry("launch/chain_fit/eager/kernels:1-1000", 3e-3, r, 5, per_kernel_s=2.5e-6, fixed_s=4e-6))
    ctx = synthetic_context("NVIDIA H200")
    write(tmp_path / "r" / "synthetic_launch.json", {"context": ctx, "benchmarks": b})
    out = tmp_path / "rep"
    assert cli.main(["report", str(tmp_path / "r"), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert re.search(r"CUDA Graph, per kernel \(µs\) \| 0\.500 \|", md), md


def test_plots_draw_a_few_columns_and_say_which(tmp_path):
    for i in range(5):
        _stream_run(tmp_path / "results", f"card-{i}", "20260101T000000Z-synthetic", f"Synthetic Card {i}", 1000 + i)
    out = tmp_path / "rep"
    assert cli.main(["report", str(tmp_path / "results"), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    s = " (synthetic)"
    assert (
        f"drawn: 4 of 5 columns, Synthetic Card 0{s}, Synthetic Card 1{s}, Synthetic Card 2{s}, Synthetic Card 3{s}"
        in md
    )
    header = next(line for line in md.splitlines() if line.startswith("| op | type |"))
    assert "Synthetic Card 4" in header  # every card in the tables


def test_two_runs_of_one_name_in_different_folders_are_not_one_column(tmp_path):
    _stream_run(tmp_path / "a", "h", "20260101T000000Z-synthetic", "NVIDIA H200", 4000)
    _stream_run(tmp_path / "b", "h", "20260101T000000Z-synthetic", "NVIDIA H200", 2000)
    out = tmp_path / "rep"
    assert cli.main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out), "--all-runs"]) == 0
    header = next(line for line in (out / "report.md").read_text().splitlines() if line.startswith("| op | type |"))
    assert header.count("NVIDIA H200 · 20260101T000000Z-synthetic") == 2
    line = _triad_line((out / "report.md").read_text())
    assert ("4,000" in line or "4000" in line) and ("2,000" in line or "2000" in line)


def test_a_note_from_the_caller_heads_the_report(tmp_path):
    (tmp_path / "results").mkdir()
    out = tmp_path / "rep"
    assert (
        cli.main(
            [
                "report",
                str(tmp_path / "results"),
                "--out",
                str(out),
                "--note",
                "This machine has no usable GPU: this run measured nothing.",
            ]
        )
        == 0
    )
    md = (out / "report.md").read_text()
    assert md.index("This machine has no usable GPU") < md.index("No results yet")


def test_a_stream_run_without_working_set_counters_renders(tmp_path):
    # Bandwidth without the working-set counter (older or imported files) left the STREAM figure's
    # log axes with nothing positive on them: matplotlib raised while drawing, a traceback.
    d = tmp_path / "results"
    entries = [_entry("stream/copy/fp32/cache:hot/bytes:1024", 1e-6, r, 3, bytes_per_second=2e12) for r in range(3)]
    write(d / "synthetic.json", {"context": synthetic_context("NVIDIA H200"), "benchmarks": entries})
    out = tmp_path / "rep"
    assert cli.main(["report", str(d), "--out", str(out)]) == 0
    assert (out / "report.html").is_file() and not (out / "stream_bandwidth.png").exists()  # nothing to plot


def test_a_figure_that_cannot_be_drawn_is_named_not_a_traceback(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from triaudit.report import sections

    real = sections.all_sections

    def with_a_broken_figure(rs, prices=None, on_figure=None):
        secs = real(rs, prices=prices, on_figure=on_figure)
        fig, ax = plt.subplots()
        ax.text(0.5, 0.5, r"$\frac{$")  # mathtext that cannot be parsed: drawing raises (in a worker too)
        secs[0].figures.append(("broken_synthetic", "A figure with nothing to draw", fig))
        if on_figure is not None:
            on_figure("broken_synthetic", fig)
        return secs

    monkeypatch.setattr(sections, "all_sections", with_a_broken_figure)
    results = tmp_path / "results"
    _stream_run(results, "h", "20260101T000000Z-synthetic", "NVIDIA H200", 4000)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "broken_synthetic.png").write_bytes(b"an earlier report's figure")  # must not pass for this one's
    (out / ".triaudit-report.json").write_text('{"files": ["broken_synthetic.png"]}')  # that report's list
    assert cli.main(["report", str(results), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "broken_synthetic.png" not in md and not (out / "broken_synthetic.png").exists()
    assert "A figure with nothing to draw: not drawn (" in md
    html = (out / "report.html").read_text()
    assert "A figure with nothing to draw: not drawn (" in html and "alt='A figure with nothing to draw'" not in html
