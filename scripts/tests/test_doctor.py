"""doctor on this machine (no GPU) and on recorded device descriptions. The nvidia-smi lines
below are synthetic (hand-written in nvidia-smi's CSV shape), not recordings of real cards."""

import json
import os
import shutil
import subprocess

import pytest

from triaudit import commands as cli
from triaudit.doctor import checks as doctor
from triaudit.doctor import fatbin

SYNTHETIC_H200 = (
    "0, NVIDIA H200, GPU-synthetic-0, 00000000:19:00.0, 9.0, 580.65.06, 143771, "
    "5, 5, 16, 16, Enabled, Disabled, 1980, 1980, 0x0000000000000000"
)
SYNTHETIC_T4_X8_THROTTLED = (
    "1, Tesla T4, GPU-synthetic-1, 00000000:3B:00.0, 7.5, 580.65.06, 15360, "
    "3, 3, 8, 16, Disabled, [N/A], 585, 1590, 0x0000000000000004"
)


@pytest.fixture
def build_dir(stream_exe):
    return stream_exe.parents[2]


def test_fatbin_of_the_real_build(stream_exe):
    codes = fatbin.gpu_code_of(stream_exe)
    assert {c.arch for c in codes if c.kind == "sass"} == {80, 86, 89, 90, 100, 120}
    assert {c.arch for c in codes if c.kind == "ptx"} == {120}
    assert fatbin.runs_on(codes, 9, 0) == (True, "SASS for sm_90")
    assert fatbin.runs_on(codes, 8, 7)[1] == "SASS for sm_86"  # same major, older minor runs
    assert fatbin.runs_on(codes, 12, 1)[1] == "SASS for sm_120"
    assert fatbin.runs_on(codes, 7, 5)[0] is False
    assert fatbin.runs_on({fatbin.GpuCode("ptx", 80)}, 9, 0)[1].startswith("PTX for compute_80")


def test_architecture_and_family_specific_code():
    a90 = {fatbin.GpuCode("sass", 90, "a"), fatbin.GpuCode("ptx", 90, "a")}
    assert fatbin.runs_on(a90, 9, 0) == (True, "SASS for sm_90a")
    assert fatbin.runs_on(a90, 10, 0)[0] is False  # neither the SASS nor the PTX of sm_90a runs on B200
    assert fatbin.runs_on(a90 | {fatbin.GpuCode("sass", 90)}, 9, 0)[1] == "SASS for sm_90"
    f100 = {fatbin.GpuCode("sass", 100, "f"), fatbin.GpuCode("ptx", 100, "f")}
    assert fatbin.runs_on(f100, 10, 3) == (True, "SASS for sm_100f")
    assert fatbin.runs_on(f100, 12, 0)[0] is False  # family code stays in its family, PTX too
    assert fatbin.runs_on({fatbin.GpuCode("ptx", 100, "a")}, 10, 3)[0] is False
    assert fatbin.describe(a90) == "SASS: sm_90a; PTX: compute_90a"


@pytest.mark.skipif(
    shutil.which("nvcc") is None and not os.path.exists("/usr/local/cuda/bin/nvcc"), reason="needs nvcc"
)
@pytest.mark.parametrize(
    "arch,expected",
    [("90", {"sm_90", "compute_90"}), ("90a", {"sm_90a", "compute_90a"}), ("100f", {"sm_100f", "compute_100f"})],
)
def test_variant_bits_as_nvcc_writes_them(tmp_path, arch, expected):
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float* p) { p[0] = 1; }\n")
    obj = tmp_path / "k.o"
    subprocess.run(
        [nvcc, "-c", f"-gencode=arch=compute_{arch},code=[sm_{arch},compute_{arch}]", str(src), "-o", str(obj)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert {c.name for c in fatbin.gpu_code_of(obj)} == expected


def test_no_gpu_says_so_and_reports_the_toolchain(build_dir, capsys):
    code = cli.main(["doctor", "--build-dir", str(build_dir), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 77 and out["exit_code"] == 77
    assert out["sections"]["toolchain"]["nvcc"] != "not found"
    assert "sm_90" in out["sections"]["executables"]["triaudit_stream"]
    assert "none" in out["sections"]["gpus"]["visible"]


def test_recorded_h200_is_healthy(build_dir):
    r = doctor.diagnose(build_dir, smi_csv=SYNTHETIC_H200, driver_cuda="13.0", processes="", nvlink="")
    assert doctor.exit_code(r) == 0, r.problems
    assert r.gpus[0]["code:triaudit_stream"] == "SASS for sm_90"
    assert "no problems found" in doctor.render(r)


def test_recorded_problems_are_called_out(build_dir):
    r = doctor.diagnose(
        build_dir,
        smi_csv=SYNTHETIC_H200 + "\n" + SYNTHETIC_T4_X8_THROTTLED,
        driver_cuda="12.4",
        processes="GPU-synthetic-0, 4242, python, 1024 MiB",
        nvlink="",
    )
    text = "\n".join(r.problems)
    assert doctor.exit_code(r) == 1
    assert "no kernel image is available" in text and "-DCMAKE_CUDA_ARCHITECTURES=75" in text
    assert "x8 of x16" in text
    assert "sw_power_cap" in text
    assert "driver is too old" in text
    warnings = "\n".join(r.warnings)
    assert "PCIe Gen3" in warnings and "ECC is off" in warnings and "other process" in warnings


def test_parse_skips_malformed_lines():
    assert doctor.parse_smi_csv("garbage\n" + SYNTHETIC_H200)[0]["name"] == "NVIDIA H200"
    assert doctor.parse_smi_csv("") == []
