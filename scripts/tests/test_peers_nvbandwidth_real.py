"""nvbandwidth reader on real outputs as users paste them (issue #28; files and sources in
data/real/SOURCES.md): multinode and all/one-to-many testcases, a unit read from every matrix
title, runs that died (ASSERT, NVML_ERROR), elided Running lines, old and bare waive lines, a
markdown blockquote, and the JSON of v0.5 and v0.10. Synthetic variants are named so."""

import json
from pathlib import Path

import pytest

from triaudit.peers import nvbandwidth
from triaudit.peers.model import PeerFormatError

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def read(name, **kw):
    p = REAL / name if isinstance(name, str) else name
    return nvbandwidth.read(p, p.read_text(), **kw)


def cases(run):
    return {c.name: c for c in run.cases}


def no_latency_from_a_bandwidth_matrix(run):
    return all("latency_s" not in c.counters for c in run.cases if not c.name.startswith("latency/"))


def test_multinode_read_ce_is_bandwidth_named_by_process_and_keeps_the_hosts():
    run = read("nvbandwidth_gb200_multinode_read_ce_2nodes.txt")
    c = cases(run)
    assert len(run.cases) == 56  # 8 processes, the N/A diagonal left out
    # A read copies column -> row (as device_to_device_memcpy_read_ce); the indices are processes.
    one = c["p2p/ce_read/multinode/src:1/dst:0"]
    assert one.counters == {"bytes_per_second": pytest.approx(798.02e9)}
    assert c["p2p/ce_read/multinode/src:0/dst:7"].counters["bytes_per_second"] == pytest.approx(797.88e9)
    assert no_latency_from_a_bandwidth_matrix(run) and not any(n.startswith("multinode_") for n in c)
    # Bus ids repeat across the two hosts: each process keeps its host.
    assert "4: HGX GB200 on nvbandwidth-test-worker-1, device 0 (00000008:01:00)" in run.context["devices"]
    assert "0: HGX GB200 on nvbandwidth-test-worker-0, device 0 (00000008:01:00)" in run.context["devices"]
    assert run.context["hosts"] == "nvbandwidth-test-worker-0, nvbandwidth-test-worker-1"
    assert run.gpu_name == "HGX GB200" and run.context["mpi_version"].startswith("Open MPI v4.1.4")


def test_multinode_write_of_a_fork_with_dedented_rows():
    run = read("nvbandwidth_fork_sailbandwidth_multinode_16procs_ppu_dedented_rows.txt")
    c = cases(run)
    assert len(run.cases) == 240  # 16 x 16 less the diagonal
    # A write copies row -> column; rows 10..15 lost their alignment with the header.
    assert c["p2p/ce/multinode/src:0/dst:1"].counters["bytes_per_second"] == pytest.approx(384.14e9)
    assert c["p2p/ce/multinode/src:15/dst:14"].counters["bytes_per_second"] > 0
    assert no_latency_from_a_bandwidth_matrix(run)


def test_all_and_one_to_many_testcases_of_v02_are_bandwidths_with_their_own_names():
    run = read("nvbandwidth_h800x8_v0.2_all_testcases.txt")
    c = cases(run)
    assert no_latency_from_a_bandwidth_matrix(run)
    assert c["memcpy/d2h/pinned/load:all_gpus/device:0"].counters["bytes_per_second"] == pytest.approx(44.95e9)
    assert c["memcpy/h2d/pinned/load:all_gpus/device:7"].counters["bytes_per_second"] == pytest.approx(55.11e9)
    assert c["memcpy/bidir/pinned/measured:d2h/load:all_gpus/device:1"].counters["bytes_per_second"] == (
        pytest.approx(35.09e9)
    )
    assert c["memcpy/bidir/pinned/load:all_gpus/device:0"].counters["bytes_per_second"] == pytest.approx(33.49e9)
    assert c["p2p/ce/all_to_one/device:0"].counters["bytes_per_second"] == pytest.approx(177.69e9)
    assert c["p2p/ce_read/all_to_one/device:7"].counters["bytes_per_second"] == pytest.approx(142.12e9)
    assert c["p2p/ce/one_to_all/device:1"].counters["bytes_per_second"] == pytest.approx(176.03e9)
    assert c["p2p/sm_read/one_to_all/device:0"].counters["bytes_per_second"] > 0
    assert c["memcpy/d2h/zero_copy/load:all_gpus/device:0"].counters["bytes_per_second"] > 0
    # v0.2 printed one matrix for a bidirectional GPU pair: CE the measured copy, SM the sum of both.
    ce = c["p2p/ce_read/bidir/src:1/dst:0"].counters
    assert ce == {"bytes_per_second": pytest.approx(170.54e9)}
    sm = [n for n in c if n.startswith("p2p/sm_read/bidir/")]
    assert len(sm) == 56 and set(c[sm[0]].counters) == {"bytes_per_second_total"}
    # 'Device N: NAME' without a bus id (v0.2) still names the GPU.
    assert run.gpu_name == "NVIDIA H800" and run.version == "v0.2"


def test_bare_waived_lines_and_a_latency_matrix_in_v06():
    run = read("nvbandwidth_gh200_waived_latency_superbench_testdata.txt")
    c = cases(run)
    assert c["latency/host_device/sm/device:0"].counters == {"latency_s": pytest.approx(772.58e-9)}
    assert c["memcpy/d2h/pinned/load:all_gpus/device:0"].counters == {"bytes_per_second": pytest.approx(295.15e9)}
    assert no_latency_from_a_bandwidth_matrix(run)
    assert not any("Waived" in n for n in c)  # a bare 'Waived:' names no testcase
    assert "17 testcases waived without a name" in run.context["left_out"]
    # This test data has a 2 x 3 host matrix (hand-edited): a host test has one row, so it keeps its own name.
    assert "host_to_device_memcpy_ce/row:1/col:2" in c


def test_v010_latency_and_coefficient_of_variation_lines():
    run = read("nvbandwidth_h100x8_v0.10.0_d2d_latency_sm_and_coefficient_of_variation_5runs.txt")
    c = cases(run)
    assert c["latency/p2p/sm/src:0/dst:1"].counters == {"latency_s": pytest.approx(826.42e-9)}
    assert c["p2p/ce_read/uni/src:1/dst:0"].counters["bytes_per_second"] == pytest.approx(395.08e9)
    assert run.context["cuda_driver_version"] == "13.2 (13020)"
    assert "device_to_device_memcpy_read_ce 0.00" in run.context["coefficient_of_variation"]


def test_an_elided_running_line_is_named_by_the_sum_line():
    run = read("nvbandwidth_a6000x6_v0.8_elided_no_running_line_sum_present.txt")
    c = cases(run)
    assert len(run.cases) == 30
    assert c["p2p/ce_read/uni/src:3/dst:0"].counters["bytes_per_second"] == pytest.approx(21.95e9)
    assert "named by its SUM line (line 19)" in run.context["running_line_missing"]


def test_blockquoted_running_lines_and_a_flush_left_header():
    run = read("nvbandwidth_h100x8_blockquote_running_lines_stripped_header_indent.txt")
    c = cases(run)
    assert len(run.cases) == 16
    assert c["memcpy/h2d/zero_copy/device:7"].counters["bytes_per_second"] == pytest.approx(35.06e9)
    assert c["memcpy/d2h/zero_copy/device:3"].counters["bytes_per_second"] == pytest.approx(52.78e9)


def test_a_run_that_died_in_an_assert_is_an_error_entry_naming_it():
    run = read("nvbandwidth_a100x8_assert_pattern_check_failure.txt")
    assert [c.name for c in run.cases] == ["nvbandwidth_test/device_to_device_memcpy_read_ce"]
    err = run.cases[0].error
    assert err.startswith("nvbandwidth stopped (line 20): ASSERT in expression h_errorFlag == 0")
    assert "Invalid value when checking the pattern at 0x70a640000000" in err and not run.cases[0].counters
    assert "the run stopped at line 20" in run.context["stopped"]


def test_a_run_that_died_in_an_nvml_error_is_an_error_entry():
    run = read("nvbandwidth_jetson_orin_v0.8_nvml_error_after_running_line.txt")
    assert [c.name for c in run.cases] == ["nvbandwidth_test/host_to_device_memcpy_ce"]
    assert "NVML_ERROR: [Not Found] in expression nvmlDeviceGetHandleByUUID" in run.cases[0].error
    assert run.gpu_name == "Orin"


def test_every_testcase_waived_is_refused_naming_them():
    with pytest.raises(PeerFormatError, match=r"every testcase was waived \(device_to_device_memcpy_write_ce\)"):
        read("nvbandwidth_rtx2080tix2_v0.2_old_Waiving_line_only.txt")


def test_sum_lines_only_are_refused_as_no_matrix():
    with pytest.raises(PeerFormatError, match=r"grep_SUM_only_no_running_lines\.txt:1: expected .*only SUM lines"):
        read("nvbandwidth_gb300x4_grep_SUM_only_no_running_lines.txt")


def test_synthetic_matrix_without_running_or_sum_line_is_refused(tmp_path):
    text = (REAL / "nvbandwidth_a6000x6_v0.8_elided_no_running_line_sum_present.txt").read_text()
    p = tmp_path / "synthetic_no_sum.txt"
    p.write_text(text.split("SUM ")[0])
    with pytest.raises(PeerFormatError, match=r"synthetic_no_sum\.txt:10: expected the 'Running <testcase>\.' line"):
        read(p)


def test_synthetic_unknown_testcase_keeps_its_name_and_the_unit_of_its_title(tmp_path):
    text = (REAL / "nvbandwidth_gb200_multinode_read_ce_2nodes.txt").read_text()
    p = tmp_path / "synthetic_bisect.txt"
    p.write_text(text.replace("multinode_device_to_device_memcpy_read_ce", "multinode_bisect_write_ce"))
    c = cases(read(p))
    assert c["multinode_bisect_write_ce/row:0/col:1"].counters == {"bytes_per_second": pytest.approx(798.02e9)}


# --- JSON (-j) ------------------------------------------------------------------------------------


def test_json_v010_peer_matrix_with_na_diagonal():
    run = read("nvbandwidth_v0.10_json_h100x8_d2d_read_ce_NA_diagonal_azure.json")
    c = cases(run)
    assert len(run.cases) == 56
    assert c["p2p/ce_read/uni/src:1/dst:0"].counters["bytes_per_second"] == pytest.approx(395.085e9)
    assert run.version == "v0.10.0" and run.context["cuda_driver_api_version"] == "13000"
    assert run.context["host"] == "nvbw-peer" and run.gpu_name == "NVIDIA H100 80GB HBM3"


def test_json_v010_host_copies():
    c = cases(read("nvbandwidth_v0.10_json_h100x8_h2d_d2h_azure.json"))
    assert c["memcpy/h2d/pinned/device:4"].counters["bytes_per_second"] == pytest.approx(55.579e9)
    assert c["memcpy/d2h/pinned/device:7"].counters["bytes_per_second"] == pytest.approx(55.1197e9)


def test_json_status_error_is_an_error_entry():
    run = read("nvbandwidth_v0.10_json_h100x8_unknown_testcase_status_ERROR_azure.json")
    assert [c.name for c in run.cases] == ["nvbandwidth_test/not_a_real_testcase"]
    assert run.cases[0].error == (
        "nvbandwidth: ERROR: (the JSON gives no message; nvbandwidth writes ERROR for a -t name or index it does not know)"
    )


def test_json_v05_units_from_the_description_and_waived_tests():
    run = read("nvbandwidth_v0.5_json_verbose_1gpu_waived_latency_dcgm_testinput.json")
    c = cases(run)
    assert c["latency/host_device/sm/device:0"].counters == {"latency_s": pytest.approx(649.879e-9)}
    assert c["memcpy/d2h/pinned/load:all_gpus/device:0"].counters == {"bytes_per_second": pytest.approx(13.1998e9)}
    assert c["memcpy/bidir/zero_copy/measured:d2h/load:all_gpus/device:0"].counters["bytes_per_second"] == (
        pytest.approx(9.83679e9)
    )
    assert no_latency_from_a_bandwidth_matrix(run)
    assert "device_to_device_latency_sm (waived)" in run.context["left_out"]


def test_synthetic_json_testcase_without_its_matrix_is_refused(tmp_path):
    doc = json.loads((REAL / "nvbandwidth_v0.10_json_h100x8_h2d_d2h_azure.json").read_text())
    del doc["nvbandwidth"]["testcases"][1]["bandwidth_matrix"]
    p = tmp_path / "synthetic_no_matrix.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(
        PeerFormatError, match=r"testcases\[1\] \(device_to_host_memcpy_ce\) to have a bandwidth_matrix"
    ):
        read(p)


def test_synthetic_json_testcase_still_running_carries_the_global_error(tmp_path):
    doc = json.loads((REAL / "nvbandwidth_v0.10_json_h100x8_h2d_d2h_azure.json").read_text())
    root = doc["nvbandwidth"]
    root["testcases"][1] = {"name": "device_to_host_memcpy_ce", "status": "Running"}
    root["error"] = "ASSERT in expression h_errorFlag == 0 in synthetic() : memcpy.cpp:165\n"
    p = tmp_path / "synthetic_running.json"
    p.write_text(json.dumps(doc))
    c = cases(read(p))
    assert c["nvbandwidth_test/device_to_host_memcpy_ce"].error == (
        "nvbandwidth stopped in this testcase: ASSERT in expression h_errorFlag == 0 in synthetic() : memcpy.cpp:165"
    )
    assert c["memcpy/h2d/pinned/device:0"].counters["bytes_per_second"] > 0
