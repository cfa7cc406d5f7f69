import json
import re

import pytest
from synthetic import synthetic_corners_result, synthetic_stream_result, write

from triaudit import commands as cli
from triaudit.report import page as report
from triaudit.report import sections
from triaudit.results.table import load_results, load_table


def _run(tmp_path, name, card="NVIDIA H200", scale=1.0, jitter=0.005, complete=True):
    d = tmp_path / "results" / "nvidia-h200" / name
    write(d / "synthetic_corners.json", synthetic_corners_result(card, scale=scale, jitter=jitter))
    write(
        d / "synthetic_stream.json",
        synthetic_stream_result(card, hbm_gbps=4100 * scale, peak=4.8e12, sizes=(2**20, 2**28, 2**30), reps=5),
    )
    (d / "manifest.json").write_text(json.dumps({"complete": complete, "profile": "quick"}))
    return d


def test_compare_calls_a_uniform_slowdown_a_regression(tmp_path, capsys):
    base = _run(tmp_path, "20260101T000000Z-synthetic")
    new = _run(tmp_path, "20260102T000000Z-synthetic", scale=0.9)
    summary = tmp_path / "summary.md"
    assert cli.main(["compare", str(base), str(new), "--markdown", str(summary)]) == 1
    md = summary.read_text()
    assert "### slower" in md and "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192" in md
    counts = re.search(r"(\d+) slower, (\d+) faster, (\d+) same", md)
    assert int(counts.group(1)) > 10 and int(counts.group(2)) == 0
    # Medians with their unit, never "8.281e+14" (core/numbers.py with_unit).
    row = next(line for line in md.splitlines() if "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192`" in line)
    assert re.search(r"\| flops \| [\d.,]+ TFLOP/s \| [\d.,]+ TFLOP/s \|", row), row
    assert not re.search(r"\de[+-]\d", md)


def test_compare_identical_noise_is_not_a_regression(tmp_path, capsys):
    base = _run(tmp_path, "20260101T000000Z-synthetic")
    new = _run(tmp_path, "20260102T000000Z-synthetic", jitter=0.006)  # same process, other noise
    assert cli.main(["compare", str(base), str(new)]) == 0
    out = capsys.readouterr().out
    assert "0 slower, 0 faster" in out


def test_compare_refuses_other_gpu_or_incomplete_runs(tmp_path, capsys):
    base = _run(tmp_path, "a")
    other = tmp_path / "other"
    write(other / "synthetic_corners.json", synthetic_corners_result("NVIDIA H100 80GB HBM3"))
    assert cli.main(["compare", str(base), str(other)]) == 2
    assert "GPU model differs" in capsys.readouterr().err
    assert cli.main(["compare", str(base), str(other), "--allow-different"]) in (0, 1)
    partial = _run(tmp_path, "b", complete=False)
    assert cli.main(["compare", str(base), str(partial)]) == 2
    assert "interrupted run" in capsys.readouterr().err


def test_history_marks_the_regression(tmp_path, capsys):
    runs = [
        _run(tmp_path, f"2026010{i}T000000Z-synthetic", scale=s) for i, s in ((1, 1.0), (2, 1.0), (3, 0.85), (4, 0.85))
    ]
    out = tmp_path / "hist"
    assert cli.main(["history", *map(str, runs), "--out", str(out), "--cases", "gemm/cublaslt"]) == 1
    text = capsys.readouterr().out
    assert "regression: gemm/cublaslt/bf16" in text and "20260103" in text
    assert "20260104" not in text.split("regression")[1].split("\n")[0]  # steady after the drop
    assert (out / "history.png").read_bytes()[:4] == b"\x89PNG"


def test_report_has_every_corner_datasheet_fractions_and_html(tmp_path):
    run = _run(tmp_path, "20260101T000000Z-synthetic")
    out = tmp_path / "rep"
    written = report.write_report([run], out, tidy_csv=True)
    names = {p.name for p in written}
    assert {
        "report.md",
        "report.html",
        "tidy.csv",
        "gemm.csv",
        "memcpy.csv",
        "launch.csv",
        "allreduce.csv",
        "roofline.png",
        "gemm_by_precision.png",
        "memcpy_bandwidth.png",
        "launch_eager_vs_graph.png",
        "allreduce_bandwidth.png",
        "stream_bandwidth.png",
    } <= names
    md = (out / "report.md").read_text()
    # H200 is in the spec table: BF16 780 TFLOP/s of 989.4 = 79 %; HBM 4100 of 4800 GB/s = 85 %.
    assert re.search(r"\| cublaslt \| bf16 \| tn \| 780 ±[\d.]+% \(79%\) \|", md), md
    assert "4,100 ±" in md and "(85%)" in md
    # Pinned host-to-device against PCIe Gen5 x16 (64 GB/s): 55 -> 86 %.
    assert re.search(r"\| h2d \| pinned \| 55\.0 ±[\d.]+% \(86%\) \|", md)
    assert "(×0.55)" in md  # ladder ratio to cuBLAS
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 6 and "<table" in page and "src='http" not in page


def test_report_leaves_out_interrupted_runs_and_names_unknown_cards(tmp_path):
    good = _run(tmp_path, "good")
    bad = _run(tmp_path, "bad", complete=False)
    other = tmp_path / "results" / "x" / "r"
    write(other / "synthetic_stream_unknown.json", synthetic_stream_result("Imaginary GPU 9000", hbm_gbps=100))
    out = tmp_path / "rep"
    report.write_report([good, bad, other], out)
    md = (out / "report.md").read_text()
    assert "Interrupted runs (marked incomplete in their manifest), left out: bad" in md
    assert "No datasheet figures for Imaginary GPU 9000" in md
    report.write_report([good, bad], out, include_incomplete=True)
    assert "included: bad" in (out / "report.md").read_text()


def test_roofline_places_gemm_by_intensity(tmp_path):
    run = _run(tmp_path, "r")
    fig = sections.gemm.roofline_figure(load_table([run]))
    ax = fig.get_axes()[0]
    assert "NVIDIA H200" in ax.get_title()
    assert ax.get_xscale() == "log" and "FLOP/byte" in ax.get_xlabel()
    # The roofs and ridges are named in the legend (beside the points they overlapped).
    texts = " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert "bf16" in texts and "ridge" in texts
    # The measured BF16 roof is the ceiling sweep's best (780 / 0.98 = 796 TFLOP/s); over the
    # measured HBM bandwidth (4100 GB/s) its ridge is 194 FLOP/B. The ladder defines no roof.
    assert re.search(r"bf16: 796 TFLOP/s, ridge 194 FLOP/B", texts), texts
    assert "fp32" not in texts


def test_torch_anchor_without_torch_writes_nothing(tmp_path):
    # The anchor needs PyTorch and a GPU; without them it must say so and write nothing.
    from triaudit.runner import torch_anchor

    try:
        import torch  # noqa: F401

        pytest.skip("PyTorch installed: the anchor would try the GPU")
    except ImportError:
        pass
    assert torch_anchor.main([str(tmp_path / "anchor.json")]) == 77
    assert not (tmp_path / "anchor.json").exists()


def test_corner_figures_have_labelled_log_axes_and_card_legends(tmp_path):
    run = _run(tmp_path, "r")
    figures = {stem: fig for sec in sections.all_sections(load_results([run])) for stem, _, fig in sec.figures}
    for stem in ("memcpy_bandwidth", "launch_eager_vs_graph", "allreduce_bandwidth", "gemm_by_precision"):
        fig = figures[stem]
        drawn = [ax for ax in fig.get_axes() if ax.axison]  # a grid's spare panels are switched off
        assert drawn, stem
        for ax in drawn:
            # Bars on a linear axis (3.2x taller is 3.2x faster); the sweeps over sizes on log axes.
            assert ax.get_ylabel() and ax.get_yscale() == ("linear" if stem == "gemm_by_precision" else "log"), stem
        # The cards are named in a legend: the axes' own, or the figure's key below the panels.
        legends = [ax.get_legend() for ax in fig.get_axes() if ax.get_legend()] + list(fig.legends)
        labels = [t.get_text() for lg in legends for t in lg.get_texts()]
        assert any("NVIDIA H200" in lab for lab in labels), (stem, labels)
    launch = figures["launch_eager_vs_graph"].get_axes()[0]
    assert {"NVIDIA H200: eager", "NVIDIA H200: graph"} <= {line.get_label() for line in launch.get_lines()}
    assert "µs" in launch.get_ylabel() and launch.get_xscale() == "log"
    h2d = figures["memcpy_bandwidth"].get_axes()[0]
    assert h2d.get_title() == "host to device" and {"NVIDIA H200: pinned", "NVIDIA H200: pageable"} <= {
        line.get_label() for line in h2d.get_lines()
    }
    ar = figures["allreduce_bandwidth"].get_axes()[0]
    assert "busbw" in ar.get_ylabel()  # 8 ranks: busbw, not algbw


def test_report_flags_runs_measured_without_the_stream_hold(tmp_path):
    from synthetic import synthetic_stream_result, write

    from triaudit import commands as cli

    data = synthetic_stream_result("Synthetic Card A", hbm_gbps=4000)
    data["context"]["stream_latch"] = "off (TRIAUDIT_NO_LATCH: launch gaps are timed)"
    write(tmp_path / "r" / "synthetic_unlatched.json", data)
    write(tmp_path / "r" / "synthetic_latched.json", synthetic_stream_result("Synthetic Card B", hbm_gbps=4000))
    assert cli.main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "stream hold off" in md and "synthetic_unlatched.json" in md and "synthetic_latched.json" not in md
