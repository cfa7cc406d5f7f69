"""`triaudit plan allreduce --run`: the busbw a run measured at each GPU count
(triaudit_allreduce --scaling) drives the ring formula. Synthetic results (named so)."""

import json

import pytest
from synthetic import write
from test_p2p_report import MiB, scaling_result

from triaudit import commands as cli


def plan(capsys, run, *argv):
    assert cli.main(["plan", "--run", str(run), "--json", "allreduce", *argv]) == 0
    out = json.loads(capsys.readouterr().out)
    return out, {r[0]: (r[1], r[3]) for r in out["rows"]}


@pytest.fixture
def h200_run(tmp_path):
    data = scaling_result("NVIDIA H200", "NV18", {1: 0.0, 2: 360.0, 4: 350.0, 8: 340.0})
    # NCCL's own choice measured beside Ring, faster: the plan still takes Ring (its formula is a ring's).
    auto = scaling_result("NVIDIA H200", "NV18", {2: 400.0, 4: 400.0, 8: 400.0}, algo="auto")
    data["benchmarks"] += auto["benchmarks"]
    return write(tmp_path / "h200" / "triaudit_allreduce_synthetic.json", data).parent


def test_measured_busbw_at_the_gpu_count_and_size(capsys, h200_run):
    out, rows = plan(capsys, h200_run, "--payload-gb", str(2**30 / 1e9), "--gpus", "8")
    bw, src = rows["link, per direction"]
    assert bw == pytest.approx(340.0, rel=1e-9)
    assert "allreduce/scaling/fp32/algo:ring/gpus:8/bytes:1073741824" in src and src.endswith("(busbw)")
    # time = 2(n-1)/n x payload / busbw: the measured time of that case
    assert rows["time"][0] == pytest.approx(2 * 7 / 8 * 2**30 / 340e9 * 1e3, rel=1e-9)
    assert [rows[f"measured busbw, {g} GPUs"][0] for g in (2, 4, 8)] == pytest.approx([360.0, 350.0, 340.0])
    assert "measured busbw, 1 GPUs" not in rows
    assert not [n for n in out["notes"] if "extrapolation" in n]


def test_small_payload_takes_the_nearest_measured_size(capsys, h200_run):
    _, rows = plan(capsys, h200_run, "--payload-gb", str(8 * MiB / 1e9), "--gpus", "4")
    bw, src = rows["link, per direction"]
    assert bw == pytest.approx(350.0 * 0.25) and "gpus:4/bytes:8388608" in src


def test_counts_not_measured_say_which_was_used(capsys, h200_run):
    out, rows = plan(capsys, h200_run, "--payload-gb", "14", "--gpus", "16")
    assert rows["link, per direction"][0] == pytest.approx(340.0)
    assert any("measured up to 8 GPUs" in n and "extrapolation" in n for n in out["notes"])
    assert any("larger than the largest size measured (1024 MiB)" in n for n in out["notes"])
    out, rows = plan(capsys, h200_run, "--payload-gb", "1", "--gpus", "3")
    assert rows["link, per direction"][0] == pytest.approx(360.0)
    assert any("no measurement at 3 GPUs: busbw at 2 used" in n for n in out["notes"])


def test_a_given_link_still_wins(capsys, h200_run):
    _, rows = plan(capsys, h200_run, "--payload-gb", "14", "--gpus", "8", "--link", "nvlink-h100")
    assert rows["link, per direction"][0] == pytest.approx(450.0)
    assert "measured busbw, 8 GPUs" not in rows


def test_mpi_ranks_count_too(capsys, tmp_path):
    run = write(
        tmp_path / "r" / "triaudit_allreduce_mpi_synthetic.json",
        scaling_result("NVIDIA H200", "NV18", {2: 300.0, 16: 45.0}, count="ranks"),
    ).parent
    _, rows = plan(capsys, run, "--payload-gb", str(2**30 / 1e9), "--gpus", "16")
    assert rows["link, per direction"][0] == pytest.approx(45.0) and "ranks:16" in rows["link, per direction"][1]
