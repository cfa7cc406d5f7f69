"""nccl-tests reader: the real tables in data/real/ (three formats, sources in its SOURCES.md), and
synthetic variants (made here, named so) for what those lack: the -J JSON, the newest header with
per-iteration columns, a timestamp column, #wrong != 0, an old error column, NCCL_ALGO set."""

import json
import re
from pathlib import Path

import pytest

from triaudit.peers import nccl_tests
from triaudit.peers.model import PeerFormatError

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def read(name):
    p = REAL / name
    return nccl_tests.read(p, p.read_text())


def cases(run):
    return {c.name: c for c in run.cases}


def test_two_nodes_of_h100_standard_format():
    run = read("nccl_tests_2x8xh100_a3mega_gcp.txt")
    c = cases(run)
    assert len(run.cases) == 62  # 31 sizes, out-of-place and in-place
    big = "allreduce/{}/fp32/algo:auto/bytes:8589934592"
    assert c[big.format("out_of_place")].counters["busbw"] == pytest.approx(338.82e9)
    assert c[big.format("in_place")].counters["busbw"] == pytest.approx(337.35e9)
    assert c[big.format("out_of_place")].counters["algbw"] == pytest.approx(180.71e9)
    assert c[big.format("out_of_place")].time_s == pytest.approx(47535e-6)
    assert c["allreduce/out_of_place/fp32/algo:auto/bytes:1073741824"].counters["busbw"] == pytest.approx(297.86e9)
    assert c[big.format("out_of_place")].counters["ranks"] == 16
    assert run.gpu_name == "NVIDIA H100 80GB HBM3"
    assert run.context["avg_bus_bandwidth_gbps"] == "70.742"
    assert run.context["hosts"] == "ztan-mig-235z, ztan-mig-gq73"
    assert "20 back-to-back iterations" in run.statistic and "mean over ranks" in run.statistic
    assert not any(c.error for c in run.cases)


def test_old_format_without_root_with_error_column_and_a_stray_info_line():
    run = read("nccl_tests_8xa100_sxm4_40gb_superbench_fixture.txt")
    c = cases(run)
    big = "allreduce/{}/fp32/algo:auto/bytes:8589934592"
    assert c[big.format("out_of_place")].counters["busbw"] == pytest.approx(235.26e9)
    assert c[big.format("in_place")].counters["busbw"] == pytest.approx(235.03e9)
    assert run.gpu_name == "A100-SXM4-40GB" and c[big.format("in_place")].counters["ranks"] == 8
    # The two rows of 0 elements moved nothing: left out, and said so.
    assert "2 row(s) of 0 elements" in run.context["rows_left_out"]
    assert len(run.cases) == 64 and "allreduce/out_of_place/fp32/algo:auto/bytes:4" in c
    assert "off" in run.context["validation"]  # validation: 0, the error column is N/A
    assert not any(c.error for c in run.cases)


def test_pcie_pair_and_a_table_inside_an_nccl_info_log():
    run = read("nccl_tests_2x_rtx2080ti_pcie_autodl.txt")
    assert len(run.cases) == 56
    assert cases(run)["allreduce/out_of_place/fp32/algo:auto/bytes:1073741824"].counters["busbw"] == pytest.approx(
        4.0e9
    )
    assert all(c.counters["algbw"] == c.counters["busbw"] for c in run.cases)  # n = 2
    info = read("nccl_info_p2p_nvlink_2xa100_sxm4.txt")
    assert info.context["nccl_version"] == "2.20.5+cuda12.4"
    assert cases(info)["allreduce/out_of_place/fp32/algo:auto/bytes:536870912"].counters["busbw"] == pytest.approx(
        192.43e9
    )
    assert len(info.cases) == 6  # rows published without their leading spaces still read


# --- synthetic variants: formats the real files lack, written from src/util.cu's printf formats ---


def _real_rows(name="nccl_tests_2x_rtx2080ti_pcie_autodl.txt"):
    text = (REAL / name).read_text()
    return [line.split() for line in text.splitlines() if line.strip() and line.split()[0].isdigit()]


def synthetic_json_from_real_table() -> dict:
    """The -J output util.cu would write for the real 2-GPU table (its numbers, its layout)."""
    results = []
    for t in _real_rows():
        size, count, typ, redop, root = int(t[0]), int(t[1]), t[2], t[3], t[4]

        def part(a, t=t):
            return {
                "time": float(t[a]),
                "alg_bw": float(t[a + 1]),
                "bus_bw": float(t[a + 2]),
                "nwrong": float(t[a + 3]),
            }

        results.append(
            {
                "size": size,
                "count": count,
                "type": typ,
                "redop": redop,
                "root": "%6i" % int(root),
                "out_of_place": part(5),
                "in_place": part(9),
                "actual_iterations": 20,
                "experiment_name": "AllReduce",
            }
        )
    devices = [
        {
            "rank": r,
            "group": 0,
            "pid": 31706,
            "hostname": "autodl-container-xxxxx",
            "device": r,
            "device_hex": h,
            "device_info": "NVIDIA GeForce RTX 2080 Ti",
        }
        for r, h in ((0, "0000:b4:00"), (1, "0000:b5:00"))
    ]
    return {
        "version": 2,
        "start_time": "2025-01-01 00:00:00",
        "args": ["./build/all_reduce_perf", "-b", "8", "-e", "1G"],
        "env": ["PATH=/usr/bin", "SYNTHETIC=this fixture is made by the test"],
        "nccl_version": 22005,
        "config": {
            "nthreads": 1,
            "ngpus": 2,
            "minimum_bytes": 8,
            "maximum_bytes": 1073741824,
            "step_factor": 2,
            "warmup_iters": 5,
            "iterations": 20,
            "aggregated_iterations": 1,
            "validation": 1,
            "graph": 0,
            "blocking_collectives": "false",
            "parallel_init": "false",
            "devices": devices,
        },
        "results": results,
        "out_of_bounds": {"count": 0, "okay": "true"},
        "average_bus_bandwidth": {"bandwidth": 2.05774, "okay": "unchecked"},
        "errors": [],
        "end_time": "2025-01-01 00:01:00",
    }


def test_synthetic_json_reads_the_same_cases_as_the_table(tmp_path):
    p = tmp_path / "synthetic_nccl_tests.json"
    p.write_text(json.dumps(synthetic_json_from_real_table()))
    j = nccl_tests.read(p, p.read_text())
    t = read("nccl_tests_2x_rtx2080ti_pcie_autodl.txt")
    assert {c.name: c.counters for c in j.cases} == {c.name: c.counters for c in t.cases}
    assert j.gpu_name == "NVIDIA GeForce RTX 2080 Ti" and j.context["nccl_version"] == "2.20.5"
    assert "algo:auto" in j.cases[0].name and "not in the recorded environment" in j.context["nccl_algo"]


def test_synthetic_json_with_nccl_algo_and_a_wrong_row_and_truncation(tmp_path):
    doc = synthetic_json_from_real_table()
    doc["env"].append("NCCL_ALGO=Ring")
    doc["results"][-1]["in_place"]["nwrong"] = 12.0
    p = tmp_path / "synthetic_nccl_tests.json"
    p.write_text(json.dumps(doc))
    run = nccl_tests.read(p, p.read_text())
    c = cases(run)
    bad = c["allreduce/in_place/fp32/algo:ring/bytes:1073741824"]
    assert bad.error.startswith("nccl-tests found 12 wrong elements") and not bad.counters
    assert c["allreduce/out_of_place/fp32/algo:ring/bytes:1073741824"].counters["busbw"] == pytest.approx(4e9)
    p.write_text(json.dumps(doc)[:5000])
    with pytest.raises(PeerFormatError, match=r"synthetic_nccl_tests\.json:1: expected nccl-tests JSON"):
        nccl_tests.read(p, p.read_text())


def _printf_row(t, per_iter=False, ts=None):
    """A row as util.cu prints it ('%12li  %12li  %8s  %6s  %6s' then each group)."""
    line = "%12li  %12li  %8s  %6s  %6s" % (int(t[0]), int(t[1]), t[2], t[3], t[4])
    for a in (5, 9):
        line += "  %7s  %6s  %6s  %6g" % (t[a], t[a + 1], t[a + 2], float(t[a + 3]))
        if per_iter:  # synthetic per-iteration figures: the group's own time, four times
            line += "  %7s  %7s  %7s  %7s" % (t[a], t[a], t[a], "0.50")
    return line + ("%21s" % ts if ts else "")


def test_synthetic_newest_header_with_per_iteration_columns(tmp_path):
    hdr = [
        "# nccl-tests version 2.17.6 nccl-headers=22703 nccl-library=22703",
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 2 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
        "validation: 1 graph: 0 unalign: 0",
        "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows ",
        "#",
        "# Using devices",
        "#  Rank  0 Group  0 Pid  31706 on synthetic device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti",
        "#  Rank  1 Group  0 Pid  31706 on synthetic device  1 [0000:b5:00] NVIDIA GeForce RTX 2080 Ti",
        "#",
        "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)                                "
        "in-place (+ per-iteration)" % ("", "", "", "", ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s %*s"
        % (
            "size",
            "count",
            "type",
            "redop",
            "root",
            "time",
            "algbw",
            "busbw",
            "#wrong",
            "i_min",
            "i_max",
            "i_p99",
            "i_cv%",
            "time",
            "algbw",
            "busbw",
            "#wrong",
            "i_min",
            "i_max",
            "i_p99",
            "i_cv%",
            0,
            "",
        ),
    ]
    rows = [_printf_row(t, per_iter=True) for t in _real_rows()]
    foot = [
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 2.05774 ",
        "#",
        "# Collective test concluded: all_reduce_perf",
    ]
    p = tmp_path / "synthetic_newest.txt"
    p.write_text("\n".join(hdr + rows + foot) + "\n")
    run = nccl_tests.read(p, p.read_text())
    c = cases(run)["allreduce/out_of_place/fp32/algo:auto/bytes:1073741824"]
    assert c.counters["busbw"] == pytest.approx(4.0e9) and c.counters["iter_min_s"] == pytest.approx(268588e-6)
    assert c.counters["iter_cv_pct"] == pytest.approx(0.5)
    assert run.version == "2.17.6" and run.context["nccl_version"] == "2.27.3"
    assert run.context["program"] == "all_reduce_perf"


def test_synthetic_timestamp_column_wrong_rows_and_the_old_error_column(tmp_path):
    real = (REAL / "nccl_tests_2x_rtx2080ti_pcie_autodl.txt").read_text().splitlines()
    out = []
    for line in real:
        if line.startswith("#       size"):
            line += "           timestamp"
        elif line.strip() and line.split()[0].isdigit():
            t = line.split()
            if t[0] == "4096":
                t[8] = "7"  # synthetic: 7 wrong elements out-of-place at 4 KiB
            line = _printf_row(t, ts="2025-01-01 00:00:00")
        out.append(line)
    p = tmp_path / "synthetic_timestamps.txt"
    p.write_text("\n".join(out) + "\n")
    c = cases(nccl_tests.read(p, p.read_text()))
    assert (
        c["allreduce/out_of_place/fp32/algo:auto/bytes:4096"].error
        == "nccl-tests found 7 wrong elements (#wrong): not a number"
    )
    assert c["allreduce/in_place/fp32/algo:auto/bytes:4096"].counters["busbw"] == pytest.approx(0.34e9)
    # The old format's error column: a deviation above nccl-tests' tolerance for float (1e-5) is an error.
    old = (REAL / "nccl_tests_8xa100_sxm4_40gb_superbench_fixture.txt").read_text()
    old = re.sub(r"(  1073741824 .*?)N/A", lambda m: m.group(1) + "2e-03", old, count=1)
    p.write_text(old)
    c = cases(nccl_tests.read(p, p.read_text()))
    assert "exceeds its tolerance 1e-05" in c["allreduce/out_of_place/fp32/algo:auto/bytes:1073741824"].error


def test_nccl_algo_from_the_info_output_names_the_algorithm(tmp_path):
    text = (REAL / "nccl_info_p2p_nvlink_2xa100_sxm4.txt").read_text()
    text = text.replace(
        "NCCL version 2.20.5+cuda12.4",
        "NCCL version 2.20.5+cuda12.4\n3767c65d25c4:880:880 [0] NCCL INFO NCCL_ALGO set by environment to Ring",
    )
    p = tmp_path / "synthetic_algo_ring.txt"
    p.write_text(text)
    run = nccl_tests.read(p, text)
    assert "allreduce/out_of_place/fp32/algo:ring/bytes:536870912" in cases(run)
    assert run.context["nccl_algo"].startswith("Ring")


def test_truncated_and_malformed_tables_are_refused_with_file_and_line(tmp_path):
    lines = (REAL / "nccl_tests_2x8xh100_a3mega_gcp.txt").read_text().splitlines()
    p = tmp_path / "cut.txt"
    p.write_text("\n".join(lines[:40]) + "\n")
    with pytest.raises(PeerFormatError, match=r"cut\.txt:40: expected the table's '# Avg bus bandwidth' footer"):
        nccl_tests.read(p, p.read_text())
    bad = list(lines)
    bad[30] = bad[30].replace("147.1", "14x.1", 1)
    p.write_text("\n".join(bad) + "\n")
    with pytest.raises(PeerFormatError, match=r"cut\.txt:31: expected numbers in the out-of-place columns"):
        nccl_tests.read(p, p.read_text())
    bad = list(lines)
    bad[30] = " ".join(bad[30].split()[:7])
    p.write_text("\n".join(bad) + "\n")
    with pytest.raises(PeerFormatError, match=r"cut\.txt:31: expected 13 columns"):
        nccl_tests.read(p, p.read_text())
    p.write_text("no table here\n")
    with pytest.raises(PeerFormatError, match="expected an nccl-tests table"):
        nccl_tests.read(p, p.read_text())


def test_collective_names():
    assert nccl_tests.collective_name("./build/all_reduce_perf") == "allreduce"
    assert nccl_tests.collective_name("all_gather_perf_mpi") == "allgather"
    assert nccl_tests.nccl_code_to_version(22005) == "2.20.5" and nccl_tests.nccl_code_to_version(2805) == "2.8.5"


def test_an_algbw_printed_as_zero_is_size_over_time():
    """nccl-tests prints GB/s with two decimals: 8 B in 12.25 us is '0.00'. A zero is no link's
    bandwidth (the reader would make it an error); the tool's own size / time is taken instead,
    busbw by the table's own busbw / algbw, and the context says so."""
    run = read("nccl_tests_2x_rtx2080ti_pcie_autodl.txt")
    c = cases(run)
    small = c["allreduce/out_of_place/fp32/algo:auto/bytes:8"]
    assert small.counters["algbw"] == pytest.approx(8 / 12.25e-6)
    assert small.counters["busbw"] == pytest.approx(small.counters["algbw"])  # n = 2: busbw = algbw
    printed = c["allreduce/out_of_place/fp32/algo:auto/bytes:1073741824"]
    assert printed.counters["algbw"] == pytest.approx(4.00e9)  # printed figures stay as printed
    assert run.context["algbw_from_time_rows"] == "6"  # 8, 16 and 32 B, out of place and in place
    assert "size / time" in run.context["algbw_from_time"]
