"""scripts/run_peers.sh without a GPU: stand-in tools (made here) print real published outputs, so
the script's search, its budget, its summary and the import of what it kept are exercised; absent
tools are named. Also: shellcheck-clean, and the published section names each side's statistic."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

from triaudit import commands as cli
from triaudit.peers import statistics as S
from triaudit.report.published import PUBLISHED, comparison_table
from triaudit.results.table import load_table

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md
SCRIPT = REPO / "scripts" / "run_peers.sh"


def _stub(folder, name, real_file):
    p = folder / name
    p.write_text(f"#!/bin/sh\ncat '{real_file}'\n")
    p.chmod(0o755)


def test_shellcheck_clean():
    if not shutil.which("shellcheck"):
        pytest.skip("shellcheck not installed")
    r = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_usage_errors_exit_2(tmp_path):
    for args in ([], [str(tmp_path / "o")], [str(tmp_path / "o"), "ten"]):
        r = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True)
        assert r.returncode == 2 and "run_peers.sh" in r.stderr


def test_finds_stand_ins_names_the_absent_and_its_output_imports(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _stub(bin_dir, "all_reduce_perf", REAL / "nccl_tests_2x_rtx2080ti_pcie_autodl.txt")
    _stub(bin_dir, "nvbandwidth", REAL / "nvbandwidth_a100_sxm4_40gb_h2d_sm.txt")
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin", HOME=str(tmp_path))
    env.pop("MAMF_FINDER", None)
    r = subprocess.run(
        ["bash", str(SCRIPT), str(out), "60"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert r.returncode == 0, r.stdout + r.stderr
    summary = (out / "peers.txt").read_text()
    assert f"found nccl-tests: {bin_dir}/all_reduce_perf" in summary
    assert f"found nvbandwidth: {bin_dir}/nvbandwidth" in summary
    assert "absent: BabelStream" in summary and "absent: mamf-finder" in summary
    assert "-d float" in (out / "peers.log").read_text() and "-b 256" in (out / "peers.log").read_text()
    assert sorted(p.name for p in out.iterdir()) == [
        "nccl-tests_allreduce_bf16.txt",
        "nccl-tests_allreduce_fp32.txt",
        "nvbandwidth.txt",
        "peers.log",
        "peers.txt",
    ]
    assert f"triaudit import nvbandwidth {out}/nvbandwidth.txt --buffer-size 256MiB --results results" in summary
    res = tmp_path / "results"
    assert cli.main(["import", "nccl-tests", str(out / "nccl-tests_allreduce_fp32.txt"), "--results", str(res)]) == 0
    assert (
        cli.main(
            ["import", "nvbandwidth", str(out / "nvbandwidth.txt"), "--buffer-size", "256MiB", "--results", str(res)]
        )
        == 0
    )


def test_a_tool_over_its_share_is_stopped_and_reported(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    slow = bin_dir / "nvbandwidth"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin", HOME=str(tmp_path))
    r = subprocess.run(
        ["bash", str(SCRIPT), str(out), "11"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )
    assert r.returncode == 1
    summary = (out / "peers.txt").read_text()
    assert "stopped after its share of 11s" in summary and "nvbandwidth failed" in summary


def test_published_figures_name_each_sides_statistic(tmp_path):
    from synthetic import synthetic_corners_result, synthetic_stream_result, write

    run = tmp_path / "results" / "synthetic-a100"
    write(run / "synthetic_stream.json", synthetic_stream_result("NVIDIA A100-SXM4-80GB", hbm_gbps=1650))
    write(run / "synthetic_corners.json", synthetic_corners_result("NVIDIA A100-SXM4-80GB"))
    t = comparison_table(load_table(sorted(run.glob("*.json"))))
    rows = {fig: r for (card, fig), r in t.iterrows()}
    triad = rows["STREAM triad, HBM (GB/s)"]
    assert triad["published statistic"] == S.PUBLISHED_BABELSTREAM
    assert triad["published statistic"].startswith("best of 100 runs")
    assert triad["this run's statistic"] == "median of 3 repetitions"  # the synthetic stream run has 3
    assert rows["BF16 GEMM, best shape (TFLOP/s)"]["published statistic"] == S.PUBLISHED_MAMF_TABLE
    assert "mean of 100 iterations" in S.PUBLISHED_MAMF_TABLE
    assert rows["host to device, pinned (GB/s)"]["published statistic"].startswith("mean of 100 back-to-back copies")
    assert rows["BF16 GEMM, best shape (TFLOP/s)"]["this run's statistic"] == "median of 5 repetitions"
    h100 = {p.figure: p.statistic for p in PUBLISHED["h100-sxm"]}
    assert h100["h2d_pinned"].startswith("median of 3 samples of 16 copies")
    assert h100["stream_triad"] == S.UNSTATED
