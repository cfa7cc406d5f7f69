"""nccl-tests reader on real outputs as users paste them (issue #28; files and sources in
data/real/SOURCES.md): several collectives in one file, old and new column sets, mpirun
--tag-output prefixes, pages that stripped every '#', tables cut or trimmed, runs that failed,
foreign lines, one rank, rccl-tests, and the -J JSON v3. Synthetic variants are named so."""

import re
from pathlib import Path

import pytest

from triaudit.peers import nccl_tests
from triaudit.peers.model import PeerFormatError
from triaudit.peers.nccl_common import corner_of

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def read(name):
    p = REAL / name if isinstance(name, str) else name
    return nccl_tests.read(p, p.read_text())


def cases(run):
    return {c.name: c for c in run.cases}


# nccl-tests' reduce_scatter lands under triaudit's corner of that name (corners/), where it has one.
RS = corner_of("reduce_scatter") or "reducescatter"


def collectives(run):
    return sorted({c.name.split("/", 1)[0] for c in run.cases})


def test_five_collectives_in_one_file_each_named_and_judged_on_its_own():
    run = read("nccl_tests_old_5collectives_one_file_error_column_v100x12.txt")
    c = cases(run)
    assert collectives(run) == sorted(["allgather", "allreduce", "broadcast", "reduce", RS])
    assert len(run.cases) == 298 and "repeated_cases" not in run.context
    # Old nccl-tests' error column: the all_gather table's 1e+00 at 4 and 8 GiB fail it, nothing else.
    bad = sorted(n for n, k in c.items() if k.error)
    assert bad == [
        f"allgather/{p}/fp32/algo:auto/bytes:{s}"
        for p in ("in_place", "out_of_place")
        for s in (4294967280, 8589934560)
    ]
    assert c["allreduce/out_of_place/fp32/algo:auto/bytes:8589934592"].counters["busbw"] == pytest.approx(123.56e9)
    assert c["broadcast/out_of_place/fp32/algo:auto/root:0/bytes:8589934592"].counters["busbw"] == (
        pytest.approx(122.15e9)
    )
    assert c["reduce/in_place/fp32/algo:auto/root:0/bytes:8589934592"].counters["busbw"] == pytest.approx(122.70e9)
    assert c[f"{RS}/out_of_place/fp32/algo:auto/bytes:8589934560"].counters["busbw"] == (pytest.approx(64.16e9))
    # Each table keeps its own verdict and average: all_gather's FAILED is not overwritten by OK.
    tables = run.context["tables"]
    assert "allgather (line 19): Out of bounds values : 4 FAILED, Avg bus bandwidth 30.2993" in tables
    assert "allreduce (line 73): Out of bounds values : 0 OK, Avg bus bandwidth 42.5578" in tables
    # busbw of the rows printed as 0.00 comes from each table's own busbw/algbw.
    small = c["allreduce/out_of_place/fp32/algo:auto/bytes:8"].counters
    assert small["busbw"] / small["algbw"] == pytest.approx(123.56 / 67.40, rel=1e-3)
    assert "named by 'Running: CUDA_VISIBLE_DEVICES" in run.context["collective"]


@pytest.mark.parametrize(
    "name,collective,case,busbw",
    [
        ("nccl_tests_allgather_no_redop_root_error_column_a100x8_superbench.txt", "allgather", "bytes:8589934592", 0),
        ("nccl_tests_broadcast_root_error_column_a100x8_superbench.txt", "broadcast", "algo:auto/root:0/bytes:8", 0),
        ("nccl_tests_reduce_redop_root_error_column_a100x8_superbench.txt", "reduce", "algo:auto/root:0/bytes:8", 0),
        ("nccl_tests_reducescatter_error_column_a100x8_superbench.txt", RS, "bytes:8589934592", 231.52e9),
        ("nccl_tests_alltoall_empty_redop_error_column_a100x8_superbench.txt", "alltoall", "bytes:8589934592", 0),
    ],
)
def test_old_column_sets_name_their_collective(name, collective, case, busbw):
    run = read(name)
    assert collectives(run) == [collective]
    hit = [c for c in run.cases if c.name.startswith(f"{collective}/out_of_place/") and c.name.endswith(case)]
    assert len(hit) == 1 and not any(c.error for c in run.cases)
    if busbw:
        assert hit[0].counters["busbw"] == pytest.approx(busbw)
    assert "from the table's shape" in run.context["collective"]


def test_mpirun_tag_output_prefixes_are_read():
    run = read("nccl_tests_allreduce_mpirun_tag_output_t4x2_efa_nccl2.12.7.txt")
    c = cases(run)
    assert len(run.cases) == 58  # 4 B .. 1 GiB, out of place and in place; two rows of 0 elements
    assert c["allreduce/out_of_place/fp32/algo:auto/bytes:1073741824"].counters["busbw"] == pytest.approx(3.11e9)
    assert run.gpu_name == "Tesla T4" and run.context["nccl_version"] == "2.12.7+cuda11.4"
    assert run.context["hosts"] == "test-nccl-efa-worker-0, test-nccl-efa-worker-1"
    assert "[1,0]<stdout>:" in run.context["line_prefixes"]
    assert "sendrecv" in run.context["collective"]  # 2 ranks: allreduce's busbw factor is sendrecv's


def test_a_tag_output_fragment_of_one_row():
    run = read("nccl_tests_allreduce_tag_output_fragment_p5_2nodes.txt")
    assert cases(run)["allreduce/in_place/fp32/algo:auto/bytes:2147483648"].counters["busbw"] == (
        pytest.approx(439.28e9)
    )
    assert run.context["avg_bus_bandwidth_gbps"] == "53.2202"


def test_a_page_that_stripped_every_hash_is_read():
    run = read("nccl_tests_allgather_hash_stripped_validation0_NA_a3mega_2nodes.txt")
    c = cases(run)
    assert len(run.cases) == 22
    # Neither program nor ranks are printed: all_gather and alltoall have this shape; the name says both.
    big = c["allgather_or_alltoall/out_of_place/fp32/algo:auto/bytes:8589934592"]
    assert big.counters["busbw"] == pytest.approx(188.54e9)
    assert "allgather, alltoall" in run.context["collective"]
    assert "'#'" in run.context["hash_stripped"] and "off" in run.context["validation"]
    assert run.context["avg_bus_bandwidth_gbps"] == "146.948"


def test_a_hash_stripped_table_cut_short_is_refused():
    with pytest.raises(PeerFormatError, match=r"truncated_l40s_2nodes\.txt:34: expected the table's '# Avg bus"):
        read("nccl_tests_allreduce_hash_stripped_truncated_l40s_2nodes.txt")


def test_a_table_without_footer_that_reaches_max_bytes_is_complete():
    run = read("nccl_tests_sendrecv_a100x8_g8_table_only_inplace_wrong_NA.txt")
    c = cases(run)
    assert collectives(run) == ["sendrecv"] and len(run.cases) == 8
    assert c["sendrecv/out_of_place/fp32/algo:auto/bytes:1073741824"].counters["busbw"] == pytest.approx(195.10e9)
    assert "reaches maxBytes (1073741824)" in run.context["footer_missing"]


def test_sendrecv_named_by_its_busbw_factor_on_eight_ranks():
    run = read("nccl_tests_sendrecv_h100_2nodes_4gpus_each_roce_nccl2.26.2_info_interleaved_full_log.txt")
    assert collectives(run) == ["sendrecv"] and len(run.cases) == 26
    # The log's INFO lines say NCCL_ALGO=Ring was set.
    assert cases(run)["sendrecv/out_of_place/fp32/algo:ring/bytes:26843545600"].counters["busbw"] == (
        pytest.approx(5.85e9)
    )
    assert run.cases[0].counters["ranks"] == 8


def test_a_foreign_line_inside_the_table_is_skipped_and_said():
    run = read("nccl_tests_allreduce_rtx3090x3_foreign_line_in_table_162_FAILED.txt")
    assert len(run.cases) == 54 and all(c.error for c in run.cases)
    assert run.context["foreign_lines"] == "line 11: 'Connect QP'"
    assert "162 FAILED" in run.context["out_of_bounds"]


def test_wrong_counts_in_exponent_form_are_errors():
    c = cases(read("nccl_tests_allreduce_rtx3090x2_wrong_exponent_format_108_FAILED.txt"))
    assert c["allreduce/out_of_place/fp32/algo:auto/bytes:2097152"].error == (
        "nccl-tests found 1.04858e+06 wrong elements (#wrong): not a number"
    )


def test_wrong_rows_and_the_failure_lines_after_the_summary():
    run = read("nccl_tests_allreduce_v2.17.8_gh200x2_wrong_nonzero_FAILED.txt")
    bad = sorted(c.name for c in run.cases if c.error)
    assert bad == [f"allreduce/{p}/fp32/algo:auto/bytes:1048576" for p in ("in_place", "out_of_place")]
    assert "line 43" in run.context["failure_after_table"] and len(run.cases) == 50


@pytest.mark.parametrize(
    "name,line,what",
    [
        ("nccl_tests_allreduce_rtx5090x2_test_nccl_failure_no_rows.txt", 10, "Test NCCL failure common.cu:392"),
        ("nccl_tests_allreduce_v2.17.8_gh200x8_test_cuda_failure_device_busy.txt", 14, "is/are busy or unavailable"),
        ("nccl_tests_alltoall_v2.17.6_h800x16_row_cut_by_test_cuda_failure.txt", 27, "illegal memory access"),
        ("nccl_tests_hash_stripped_invalid_device_ordinal_mpirun_abort_l40s.txt", 4, "invalid device ordinal"),
        (
            "nccl_tests_v2.19.7_allreduce_invalid_number_of_gpus_json_writing_line_mpirun_abort.txt",
            7,
            "Invalid number of GPUs: 297 requested",
        ),
        ("nccl_tests_allreduce_mpi_abort_signal6_libfabric_no_nccl_output.txt", 1, "aborting the MPI job"),
    ],
)
def test_a_run_that_failed_before_any_row_is_refused_naming_the_failure(name, line, what):
    with pytest.raises(
        PeerFormatError, match=rf"{re.escape(name)}:{line}: expected .*the run failed .*{re.escape(what)}"
    ):
        read(name)


def test_a_row_cut_by_the_failure_is_named():
    with pytest.raises(PeerFormatError, match=r"the row of 2097152 B was cut by it"):
        read("nccl_tests_alltoall_v2.17.6_h800x16_row_cut_by_test_cuda_failure.txt")


@pytest.mark.parametrize(
    "name,largest",
    [
        ("nccl_tests_allreduce_single_rank_rtx5090_huge_inplace_algbw.txt", "1.78e+06"),
        ("nccl_tests_allreduce_single_rank_rtx3090_huge_inplace_algbw.txt", "2.38e+06"),
        ("nccl_tests_alltoall_single_rank_rtx5090_huge_algbw_NA.txt", "4.3e+04"),
    ],
)
def test_in_place_on_one_rank_is_no_measurement(name, largest):
    run = read(name)
    assert run.cases and not any("/in_place/" in c.name for c in run.cases)
    assert all(c.counters["ranks"] == 1 for c in run.cases)
    note = run.context["in_place_left_out"]
    assert "one rank" in note and f"up to {largest} GB/s" in note


def test_a_tail_without_the_column_header():
    run = read(
        "nccl_tests_v2.18.0_allreduce_single_rank_rtx5090_tail20_no_header_nccl_info_interleaved_1e+06_algbw.txt"
    )
    c = cases(run)
    assert collectives(run) == ["allreduce"] and len(run.cases) == 12  # in place on one rank left out
    assert c["allreduce/out_of_place/fp32/algo:auto/bytes:134217728"].counters["algbw"] == pytest.approx(761.18e9)
    assert "13 fields" in run.context["header_missing"] and "in_place_left_out" in run.context


def test_only_the_last_rank_line_gives_the_rank_count():
    run = read("nccl_tests_allreduce_gb200_20racks_1440ranks_tail_only_nccl2.26.2.txt")
    assert run.cases[0].counters["ranks"] == 1440
    assert run.context["ranks"] == "1440 (the output lists 1 of them)"
    assert collectives(run) == ["allreduce"] and "from the table's shape" in run.context["collective"]
    assert (
        read("nccl_tests_allreduce_gb200_nvl72_72ranks_tail_only_graphics_device_nccl2.26.2.txt")
        .cases[0]
        .counters["ranks"]
        == 72
    )


def test_rccl_tests_alltoall():
    run = read("nccl_tests_rccl-tests_alltoall_mi355x_g8_version_line_unhashed_blank_in_table.txt")
    c = cases(run)
    assert set(c) == {
        f"alltoall/{p}/fp32/algo:auto/bytes:{s}"
        for p in ("out_of_place", "in_place")
        for s in (
            8589934592,
            17179869184,
        )
    }
    assert c["alltoall/out_of_place/fp32/algo:auto/bytes:17179869184"].counters["busbw"] == pytest.approx(361.41e9)
    assert run.context["rccl_tests_version"] == "HEAD:e1b8a3a" and run.gpu_name == "AMD Instinct MI355X"


def test_alltoall_with_in_place_not_checked():
    run = read("nccl_tests_alltoall_gb300x4_inplace_wrong_NA_nccl2.28.7.txt")
    assert collectives(run) == ["alltoall"] and len(run.cases) == 32 and not any(c.error for c in run.cases)
    assert cases(run)["alltoall/in_place/fp32/algo:auto/bytes:17179869184"].counters["busbw"] == pytest.approx(680.70e9)


def test_json_v3():
    run = read("nccl_tests_json_v3_allreduce_h100x8_azure_ndv5_captured.json")
    c = cases(run)["allreduce/out_of_place/fp32/algo:auto/bytes:17179869184"]
    assert c.counters["busbw"] == pytest.approx(480.902491e9) and c.counters["ranks"] == 8
    assert run.context["json_file_version"] == "3" and run.context["nccl_version"] == "2.23.4"
    assert len(run.cases) == 2 and run.gpu_name == "NVIDIA H100 80GB HBM3"


# --- synthetic variants of real files (made here, named so) ---


def test_synthetic_footer_without_its_avg_line_ends_at_collective_test_concluded(tmp_path):
    text = (REAL / "nccl_tests_alltoall_gb300x4_inplace_wrong_NA_nccl2.28.7.txt").read_text()
    p = tmp_path / "synthetic_no_avg_line.txt"
    p.write_text(re.sub(r"# Avg bus bandwidth.*\n", "", text))
    run = read(p)
    assert len(run.cases) == 32 and "avg_bus_bandwidth_gbps" not in run.context


def test_synthetic_failed_table_without_a_wrong_row_is_an_error_entry(tmp_path):
    text = (REAL / "nccl_tests_8xa100_sxm4_40gb_superbench_fixture.txt").read_text()
    p = tmp_path / "synthetic_failed.txt"
    p.write_text(text.replace("# Out of bounds values : 0 OK", "# Out of bounds values : 3 FAILED"))
    c = cases(read(p))
    assert "'Out of bounds values : 3 FAILED'" in c["nccl_tests_run/allreduce"].error


def test_synthetic_failure_after_some_rows_keeps_them_and_names_it(tmp_path):
    lines = (REAL / "nccl_tests_2x8xh100_a3mega_gcp.txt").read_text().splitlines()
    p = tmp_path / "synthetic_failed_mid_table.txt"
    p.write_text("\n".join(lines[:40] + ["host: Test NCCL failure common.cu:392 'unhandled system error / '"]) + "\n")
    run = read(p)
    c = cases(run)
    assert c["allreduce/out_of_place/fp32/algo:auto/bytes:8"].counters["busbw"] >= 0
    err = c["nccl_tests_run/allreduce"].error
    assert err.startswith("nccl-tests failed (line 41): host: Test NCCL failure") and "after 524288 B" in err
