"""doctor --nccl-log on logs of runs that died (issue #28; real logs in data/real/, sources in its
SOURCES.md): a fatal line is a problem (exit 1) named in the output, wherever it sits among the
WARN lines; warnings that are not fatal stay warnings."""

import json
from pathlib import Path

import pytest

from triaudit import commands as cli
from triaudit.doctor import interconnect as I
from triaudit.doctor import nccl_log as N

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def judged(name):
    return I.judge_nccl(I.load_nccl_log(REAL / name))


@pytest.mark.parametrize(
    "name,named",
    [
        # The fatal WARN comes after four harmless ones: it used to be cut by the first three.
        (
            "nccl_log_info_cuda_failure_1_invalid_argument_rtx5090x2_nccl2.25.1.txt",
            [
                "`NCCL WARN Cuda failure 1 'invalid argument'` (line 66, enqueue.cc:1500; then ncclUnhandledCudaError (1)",
                "Test NCCL failure common.cu:392",
            ],
        ),
        (
            "nccl_log_info_cuda_stub_library_failure_rtx3090x2_nccl2.15.5.txt",
            ["Cuda failure 'CUDA driver is a stub library'", "Test NCCL failure all_reduce.cu:44"],
        ),
        (
            "nccl_log_info_unhandled_system_error_nvml_not_found_4ranks_slurm_a100.txt",
            [
                "nvmlDeviceGetHandleByPciBusId() failed: Not Found` (line 2, misc/nvmlwrap.cc:183; 4 times; "
                "then ncclSystemError (2) returned up the call stack)",
                "'unhandled system error (run with NCCL_DEBUG=INFO for details) / '` (line 24; 4 times)",
            ],
        ),
        (
            "nccl_log_info_warn_socketFinalizeAccept_wrong_type_16ranks_2nodes.txt",
            ["socketFinalizeAccept: wrong type 4 != 3` (line 19, misc/socket.cc:502; 4 times; then ncclInternalError"],
        ),
        (
            "nccl_log_nvls_cuda_failure_invalid_argument_h800x8_nccl2.21.5.txt",
            ["'invalid argument'` (line 2, transport"],
        ),
        (
            "nccl_log_warn_ib_async_fatal_event_qp_alltoall_2nodes.txt",
            [
                "async fatal event on QP (0x…): invalid request local work queue error",
                "communicator encountered a fatal",
            ],
        ),
        (
            "nccl_log_alltoall_rtx5090_whitespace_collapsed_illegal_memory_access_nccl2.25.1.txt",
            ["`node: Test CUDA failure common.cu:297 'an illegal memory access was encountered'` (line 95)"],
        ),
    ],
)
def test_a_run_that_died_is_a_problem_naming_the_fatal_line(name, named):
    f = judged(name)
    text = "\n".join(f.problems)
    for part in named:
        assert part in text, (part, f.problems)
    assert all(p.startswith("the run failed: ") for p in f.problems)


def test_harmless_warns_stay_warnings_beside_the_fatal_one():
    f = judged("nccl_log_info_cuda_failure_1_invalid_argument_rtx5090x2_nccl2.25.1.txt")
    assert any("Could not find a path for pattern 4" in w for w in f.warnings)
    assert not any("Could not find a path" in p for p in f.problems)


def test_a_healthy_head_of_a_log_has_no_problem():
    f = judged("nccl_log_v2.18.0_allreduce_single_rank_rtx5090_head50_info_interleaved_header.txt")
    assert not f.problems


def test_doctor_exits_1_and_names_the_failure(capsys, tmp_path):
    log = REAL / "nccl_log_info_cuda_failure_1_invalid_argument_rtx5090x2_nccl2.25.1.txt"
    code = cli.main(["doctor", "--build-dir", str(tmp_path), "--json", "--nccl-log", str(log)])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["exit_code"] == 1
    assert any("Cuda failure 1 'invalid argument'" in p for p in out["problems"])
    code = cli.main(["doctor", "--build-dir", str(tmp_path), "--nccl-log", str(log)])
    assert code == 1 and "Test NCCL failure common.cu:392" in capsys.readouterr().out


def test_a_log_of_nccl_tests_failures_only_is_judged_not_refused(tmp_path):
    """No NCCL INFO line, but nccl-tests' own failure lines: a dead run, not an unusable file."""
    log = I.load_nccl_log(REAL / "nccl_tests_allreduce_v2.17.8_gh200x8_test_cuda_failure_device_busy.txt")
    f = I.judge_nccl(log)
    assert f.problems == [
        "the run failed: `gpu-1-1: Test CUDA failure common.cu:1304 'CUDA-capable device(s) is/are busy or "
        "unavailable'` (line 14; 6 times, on gpu-1-1, gpu-1-7)"
    ]


def test_synthetic_error_return_without_a_warn_is_a_warning():
    log = N.parse_nccl_log("host:1:2 [0] NCCL INFO init.cc:100 -> 5\n", "synthetic")
    f = I.judge_nccl(log)
    assert not f.problems and any("ncclInvalidUsage (5)" in w and "init.cc:100" in w for w in f.warnings)
