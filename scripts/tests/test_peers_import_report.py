"""`triaudit import` writes Google Benchmark-shaped run folders that the report loads, never over an
earlier one; the report's "Peers side by side" matches them to triaudit's cases per card. The
triaudit runs here are synthetic (made in code, named so); the peer outputs are real."""

import json
from pathlib import Path

import pytest

from triaudit import commands as cli
from triaudit.peers.side_by_side import side_by_side
from triaudit.report.published import comparison_table
from triaudit.results.gbench import load_result
from triaudit.results.table import load_results, load_table

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def _rows_and_contexts(path):
    rs = load_results([path])
    return rs.table, rs.contexts


def synthetic_triaudit_run(path, card, entries, reps=5, jitter=0.002, context=None):
    """entries: {case: {counter: value}}; repetitions spread by `jitter`."""
    bench = []
    for case, counters in entries.items():
        for r in range(reps):
            j = 1 + jitter * (r - reps // 2)
            bench.append(
                {
                    "name": case + "/manual_time",
                    "run_name": case + "/manual_time",
                    "run_type": "iteration",
                    "repetitions": reps,
                    "repetition_index": r,
                    "threads": 1,
                    "iterations": 10,
                    "real_time": 1.0,
                    "cpu_time": 1.0,
                    "time_unit": "us",
                    **{k: v * j for k, v in counters.items()},
                }
            )
    ctx = {
        "gpu_available": "true",
        "gpu_name": card,
        "synthetic": "true (test fixture, not a measurement)",
        **(context or {}),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    assert "synthetic" in path.name
    path.write_text(json.dumps({"context": ctx, "benchmarks": bench}))
    return path


def test_import_writes_a_new_folder_each_time_in_google_benchmark_shape(tmp_path, capsys):
    res = tmp_path / "results"
    f = REAL / "nccl_tests_2x8xh100_a3mega_gcp.txt"
    assert cli.main(["import", "nccl-tests", str(f), "--results", str(res)]) == 0
    assert cli.main(["import", "nccl-tests", str(f), "--results", str(res)]) == 0
    runs = sorted((res / "nvidia-h100-80gb-hbm3").iterdir())
    assert len(runs) == 2 and all("-import-nccl-tests" in r.name for r in runs)  # the second did not overwrite
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["cases"] == 62 and manifest["errors"] == 0
    rf = load_result(next(runs[0].glob("nccl-tests_*.json")))
    assert rf.context["peer_tool"] == "nccl-tests" and rf.context["gpu_name"] == "NVIDIA H100 80GB HBM3"
    assert "the NCCL version" in rf.context["peer_not_read"]
    big = [r for r in rf.runs if r.case == "peer/nccl-tests/allreduce/out_of_place/fp32/algo:auto/bytes:8589934592"]
    assert len(big) == 1 and big[0].counters["busbw"] == pytest.approx(338.82e9) and big[0].status == "ok"
    assert big[0].time_s == pytest.approx(0.047535) and big[0].iterations == 20
    assert "wrote" in capsys.readouterr().out


def test_import_refuses_bad_input_and_needs_a_card_when_the_output_has_none(tmp_path, capsys):
    res = tmp_path / "results"
    readme = REAL / "nvbandwidth_readme_8gpu_d2d_write_ce.txt"
    assert cli.main(["import", "nvbandwidth", str(readme), "--results", str(res)]) == 2
    assert "does not name its GPU" in capsys.readouterr().err and not res.exists()
    assert (
        cli.main(
            [
                "import",
                "nvbandwidth",
                str(readme),
                "--card",
                "NVIDIA H100 80GB HBM3",
                "--buffer-size",
                "512MiB",
                "--results",
                str(res),
            ]
        )
        == 0
    )
    (run,) = (res / "nvidia-h100-80gb-hbm3").iterdir()
    rf = load_result(next(run.glob("nvbandwidth_*.json")))
    assert rf.context["gpu_name_from"].startswith("--card") and "512MiB" not in rf.context["peer_copy_size_bytes"]
    assert any(r.case == "peer/nvbandwidth/p2p/ce/uni/src:0/dst:1/bytes:536870912" for r in rf.runs)
    bad = tmp_path / "cut.txt"
    bad.write_text("\n".join((REAL / "nccl_tests_2x_rtx2080ti_pcie_autodl.txt").read_text().splitlines()[:20]))
    assert cli.main(["import", "nccl-tests", str(bad), "--results", str(res)]) == 2
    err = capsys.readouterr().err
    assert "cut.txt:20: expected the table's '# Avg bus bandwidth' footer" in err and "Traceback" not in err
    assert cli.main(["import", "iperf", str(bad), "--results", str(res)]) == 2
    assert "unknown tool" in capsys.readouterr().err
    assert cli.main(["import", "babelstream", str(tmp_path / "missing.txt"), "--results", str(res)]) == 2
    assert "missing.txt: no such file or directory" in capsys.readouterr().err


def test_wrong_rows_are_imported_as_errors_and_exit_1(tmp_path, capsys):
    text = (REAL / "nccl_tests_2x_rtx2080ti_pcie_autodl.txt").read_text()
    f = tmp_path / "synthetic_wrong.txt"  # one #wrong cell changed: a synthetic variant of the real table
    f.write_text(text.replace("1.63    1.63      0    39.88", "1.63    1.63      5    39.88"))
    res = tmp_path / "results"
    assert cli.main(["import", "nccl-tests", str(f), "--results", str(res)]) == 1
    assert "1 error entry" in capsys.readouterr().out
    df = load_table([res])
    bad = df[df["status"] == "error"]
    assert list(bad["case"]) == ["peer/nccl-tests/allreduce/out_of_place/fp32/algo:auto/bytes:65536"]
    assert bad["message"].iloc[0] == "nccl-tests found 5 wrong elements (#wrong): not a number"


def test_side_by_side_matches_cards_and_cases_and_flags_differences(tmp_path):
    res = tmp_path / "results"
    assert (
        cli.main(["import", "babelstream", str(REAL / "babelstream_a100_sxm4_80gb_v5.0.txt"), "--results", str(res)])
        == 0
    )
    assert (
        cli.main(["import", "nccl-tests", str(REAL / "nccl_tests_2x8xh100_a3mega_gcp.txt"), "--results", str(res)]) == 0
    )
    a100 = "NVIDIA A100-SXM4-80GB"
    synthetic_triaudit_run(
        res / "nvidia-a100-sxm4-80gb" / "20260101T000000Z-synthetic" / "synthetic_stream.json",
        a100,
        {
            "stream/copy/fp64/cache:hot/bytes:268435456": {"bytes_per_second": 1700e9},  # 0.99 x BabelStream
            "stream/triad/fp64/cache:hot/bytes:268435456": {"bytes_per_second": 1650e9},  # 0.957 x: flagged
            "stream/add/fp64/cache:cold/bytes:268435456": {"bytes_per_second": 1716e9},  # no hot twin: cold
        },
    )
    h100 = "NVIDIA H100 80GB HBM3"
    synthetic_triaudit_run(
        res / "nvidia-h100-80gb-hbm3" / "20260101T000000Z-synthetic" / "synthetic_allreduce.json",
        h100,
        {
            "allreduce/out_of_place/fp32/algo:auto/bytes:8589934592": {"busbw": 339e9, "algbw": 180e9},
            "allreduce/out_of_place/fp32/algo:ring/bytes:1073741824": {"busbw": 270e9, "algbw": 140e9},
            "allreduce/out_of_place/fp32/algo:auto/bytes:1048576": {"busbw": 10e9, "algbw": 5e9},  # beside 9.68
        },
    )
    t, notes = side_by_side(*_rows_and_contexts(res))
    rows = {(r["card"], r["case"]): r for _, r in t.iterrows()}
    copy = rows[(a100, "stream/copy/fp64/cache:hot/bytes:268435456")]
    assert copy["check"] == "within 3 %" and copy["triaudit ÷ peer"] == f"{1700 / 1709.3608:.3f}"
    assert (
        copy["peer statistic"].startswith("best of 100 runs")
        and copy["triaudit statistic"] == "median of 5 repetitions"
    )
    triad = rows[(a100, "stream/triad/fp64/cache:hot/bytes:268435456")]
    assert triad["flag"] and triad["check"].startswith(
        "differs by -4.3 %: statistic: BabelStream keeps its fastest run"
    )
    add = rows[(a100, "stream/add/fp64/cache:cold/bytes:268435456")]
    assert "does not flush the L2" in add["matched as"]
    ring = rows[(h100, "allreduce/out_of_place/fp32/algo:ring/bytes:1073741824")]
    assert ring["flag"] and "algorithm: triaudit ran algo:ring, nccl-tests algo:auto" in ring["check"]
    assert ring["peer figure"] == "297.86 GB/s" and ring["triaudit figure"] == "270.00 GB/s"
    small = rows[(h100, "allreduce/out_of_place/fp32/algo:auto/bytes:1048576")]
    assert small["flag"] and "at this size the time is latency" in small["check"]
    big = rows[(h100, "allreduce/out_of_place/fp32/algo:auto/bytes:8589934592")]
    assert not big["flag"] and big["peer statistic"].startswith("mean over ranks of 20 back-to-back iterations")
    # Sizes nccl-tests measured that triaudit did not are counted, not compared with another size.
    assert any("nccl-tests: 59 case(s) with no triaudit counterpart" in n for n in notes)
    assert (h100, "allreduce/in_place/fp32/algo:auto/bytes:8589934592") not in rows
    # The published-figures section reads triaudit's own rows only: BabelStream's triad (a peer row)
    # is not taken for a measured cold HBM triad.
    pub = comparison_table(load_table([res]))
    assert not any(card == a100 and fig.startswith("STREAM triad") for card, fig in pub.index)


def test_report_renders_the_section(tmp_path):
    res = tmp_path / "results"
    assert (
        cli.main(
            [
                "import",
                "nvbandwidth",
                str(REAL / "nvbandwidth_a100_sxm4_40gb_h2d_sm.txt"),
                "--buffer-size",
                "64MiB",
                "--results",
                str(res),
            ]
        )
        == 0
    )
    synthetic_triaudit_run(
        res / "nvidia-a100-sxm4-40gb" / "20260101T000000Z-synthetic" / "synthetic_memcpy.json",
        "NVIDIA A100-SXM4-40GB",
        {"memcpy/h2d/zero_copy/bytes:67108864": {"bytes_per_second": 24.9e9}},
    )
    out = tmp_path / "report"
    assert cli.main(["report", str(res), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "## Peers side by side" in md and "memcpy/h2d/zero_copy/bytes:67108864" in md
    assert "25.13 GB/s" in md and "24.90 GB/s" in md and "within 3 %" in md
    csv = (out / "peers.csv").read_text()
    assert "peer/nvbandwidth/memcpy/h2d/zero_copy/device:0/bytes:67108864" in csv


def test_a_device_is_chosen_by_bus_id_when_the_peer_measured_several(tmp_path):
    text = """nvbandwidth Version: v0.8
Device 0: NVIDIA H200 (00000000:19:00)
Device 1: NVIDIA H200 (00000000:3b:00)

Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0     50.00     55.00

SUM host_to_device_memcpy_ce 105.00
"""
    f = tmp_path / "synthetic_two_gpus.txt"
    f.write_text(text)
    res = tmp_path / "results"
    assert cli.main(["import", "nvbandwidth", str(f), "--buffer-size", "256MiB", "--results", str(res)]) == 0
    synthetic_triaudit_run(
        res / "nvidia-h200" / "20260101T000000Z-synthetic" / "synthetic_memcpy.json",
        "NVIDIA H200",
        {"memcpy/h2d/pinned/bytes:268435456": {"bytes_per_second": 55.1e9}},
        context={"gpu_pci_bus_id": "00000000:3B:00.0"},
    )
    t, _ = side_by_side(*_rows_and_contexts(res))
    (row,) = [r for _, r in t.iterrows()]
    assert row["peer figure"] == "55.00 GB/s" and "device 1: the GPU triaudit measured" in row["matched as"]


def test_nvbandwidth_device_to_host_bidirectional_meets_the_d2h_counter(tmp_path):
    # nvbandwidth measures each direction of a bidirectional copy in its own test; triaudit measures
    # both in one case: the device-to-host one is its counter bytes_per_second_d2h.
    res = tmp_path / "results"
    h200 = "NVIDIA H200"
    synthetic_triaudit_run(
        res / "nvidia-h200" / "20260101T000000Z-synthetic" / "synthetic_memcpy.json",
        h200,
        {
            "memcpy/bidir/pinned/bytes:268435456": {
                "bytes_per_second": 50e9,
                "bytes_per_second_d2h": 40e9,
                "bytes_per_second_total": 90e9,
            },
        },
    )
    synthetic_triaudit_run(
        res / "nvidia-h200" / "20260102T000000Z-import-nvbandwidth" / "synthetic_nvbandwidth.json",
        h200,
        {
            "peer/nvbandwidth/memcpy/bidir/pinned/measured:d2h/bytes:268435456": {"bytes_per_second": 40.4e9},
            "peer/nvbandwidth/memcpy/bidir/pinned/bytes:268435456": {"bytes_per_second": 50.2e9},
        },
        reps=1,
        context={"peer_tool": "nvbandwidth", "peer_statistic": "median of 3 trials"},
    )
    t, _ = side_by_side(*_rows_and_contexts(res))
    d2h = t[t["peer case"].str.contains("measured:d2h")]
    assert len(d2h) == 1
    assert d2h.iloc[0]["triaudit figure"] == "40.00 GB/s" and d2h.iloc[0]["check"] == "within 3 %"
    h2d = t[~t["peer case"].str.contains("measured:d2h")]
    assert h2d.iloc[0]["triaudit figure"] == "50.00 GB/s"


def test_one_card_named_two_ways_by_two_tools_lands_in_one_column(tmp_path, capsys):
    """nccl-tests printed the old driver's "A100-SXM4-40GB", nvbandwidth "NVIDIA A100-SXM4-40GB"."""
    res = tmp_path / "results"
    nccl = REAL / "nccl_tests_8xa100_sxm4_40gb_superbench_fixture.txt"
    nvbw = REAL / "nvbandwidth_a100_sxm4_40gb_h2d_sm.txt"
    assert cli.main(["import", "nccl-tests", str(nccl), "--results", str(res)]) in (0, 1)
    assert cli.main(["import", "nvbandwidth", str(nvbw), "--results", str(res)]) in (0, 1)
    assert [p.name for p in res.iterdir() if not p.name.startswith(".")] == [
        "nvidia-a100-sxm4-40gb"
    ]  # .triaudit-store beside
    df = load_table([res])
    assert set(df["card"].astype(str)) == {"NVIDIA A100-SXM4-40GB"}
    capsys.readouterr()


def test_a_card_that_contradicts_the_output_is_refused_without_force(tmp_path, capsys):
    res = tmp_path / "results"
    nvbw = REAL / "nvbandwidth_a100_sxm4_40gb_h2d_sm.txt"
    assert cli.main(["import", "nvbandwidth", str(nvbw), "--card", "NVIDIA H200", "--results", str(res)]) == 2
    err = capsys.readouterr().err
    assert "--card 'NVIDIA H200', but the output names 'NVIDIA A100-SXM4-40GB'" in err and "--force" in err
    assert not res.exists()
    # The same name spelled the old way is no contradiction.
    assert cli.main(["import", "nvbandwidth", str(nvbw), "--card", "A100-SXM4-40GB", "--results", str(res)]) in (0, 1)
    assert cli.main(
        ["import", "nvbandwidth", str(nvbw), "--card", "NVIDIA H200", "--force", "--results", str(res)]
    ) in (
        0,
        1,
    )
    (run,) = (res / "nvidia-h200").iterdir()
    rf = load_result(next(run.glob("nvbandwidth_*.json")))
    assert rf.context["peer_gpu_name_in_output"] == "NVIDIA A100-SXM4-40GB"
    assert "--force" in rf.context["gpu_name_from"]
