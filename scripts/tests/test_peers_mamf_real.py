"""mamf-finder reader on real logs as users paste them (issue #28; files and sources in
data/real/SOURCES.md): a run stopped with Ctrl-C, the console's last progress line left in the
capture, a doc example without its header; and (synthetic, named so) a long log whose per-shape
statistic must not become one context string per shape."""

import json
from pathlib import Path

import pytest

from triaudit.peers import mamf, side_by_side
from triaudit.peers.model import PeerFormatError

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def read(name):
    p = REAL / name if isinstance(name, str) else name
    return mamf.read(p, p.read_text())


def cases(run):
    return {c.name: c for c in run.cases}


def test_a_run_stopped_with_ctrl_c_says_its_best_is_of_the_shapes_tried():
    run = read("mamf_gfx1151_radeon8050s_interrupted_ctrl_c.txt")
    c = cases(run)
    assert c["gemm/ceiling/bf16/burst"].counters["flops"] == pytest.approx(22.9e12)
    assert c["gemm/ceiling/bf16/best_mean"].counters["shapes_tried"] == 879
    assert run.context["interrupted"] == (
        "the run was interrupted (^C at line 18): its summary is the best of the 879 shapes tried before, "
        "not of the whole range"
    )
    assert all("interrupted after 879 shapes" in x.label for x in c.values() if x.name.startswith("gemm/ceiling/"))
    assert run.context["geomean"].startswith("16.5 TFLOPS for 879 shapes in range: m=[0, 16384, 1024]")
    assert run.gpu_name == "AMD Radeon Graphics"


def test_the_last_overwritten_progress_line_is_one_shape_and_said_so():
    run = read("mamf_gfx1151_strix_halo_full_header_progress_line_artifact.txt")
    c = cases(run)
    shape = c["gemm/torch/bf16/layout:tn/m:13312/n:15360/k:6144"]
    assert shape.counters == pytest.approx({"flops": 25.6e12, "flops_mean": 25.6e12, "flops_max": 25.8e12})
    assert "overwritten" in shape.label and "'PS'" in shape.label
    assert run.context["per_shape_lines"] == "1 of the 3375 shapes tried (the others' lines are not in the log)"
    assert c["gemm/ceiling/bf16/burst"].counters["flops"] == pytest.approx(36.9e12)
    assert "interrupted" not in run.context


def test_a_doc_example_without_its_header_is_refused_naming_what_is_missing():
    with pytest.raises(
        PeerFormatError, match=r"doc_example\.txt: expected .*'\*\* Dtype: \.\.\.'.*summary \(line 21\)"
    ):
        read("mamf_h200_new_MAMF_MSMF_format_doc_example.txt")


def test_synthetic_long_log_keeps_the_per_shape_statistic_once(tmp_path):
    head = (REAL / "mamf_gfx1151_strix_halo_full_header_progress_line_artifact.txt").read_text().split("Warming")[0]
    shapes = [
        f"{k:7d} |   20.0(mean)   20.1(median)   20.5(max) @ {1024 * (k % 16 + 1)}x{1024 * (k // 16 + 1)}x1024     "
        "| best:   20.0(mean)   20.1(median)   20.5(max) TFLOPS"
        for k in range(1, 3001)
    ]
    tail = "\nTried  3000 shapes => the best outcomes were:\nmean:   20.0 TFLOPS @ 1024x1024x1024 (MxNxK)\n"
    p = tmp_path / "synthetic_mamf_3000_shapes.txt"
    p.write_text(head + "\n".join(shapes) + tail)
    run = read(p)
    assert len(run.cases) == 3001
    by_case = run.context["statistic_by_case"]
    assert len(by_case) < 600  # was one entry per shape: 3000 x ~150 characters
    table = json.loads(by_case)
    assert set(table) == {"peer/mamf-finder/gemm/ceiling/bf16/best_mean", "peer/mamf-finder/gemm/torch/"}
    ctx = {f"peer_{k}": v for k, v in run.context.items()}
    shape = "peer/mamf-finder/gemm/torch/bf16/layout:tn/m:2048/n:1024/k:1024"
    assert side_by_side._statistic(ctx, shape) == "median of 100 iterations per shape (L2 written over before each)"
    assert "mean of 100" in side_by_side._statistic(ctx, "peer/mamf-finder/gemm/ceiling/bf16/best_mean")
