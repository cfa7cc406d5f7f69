"""BabelStream reader on real outputs of its other programming models (issue #28; files and
sources in data/real/SOURCES.md): each model's device line (or none), two runs in one file, a run
under Nsight Compute, a failed validation and a run that died before its table."""

from pathlib import Path

import pytest

from triaudit.peers import babelstream
from triaudit.peers.model import PeerFormatError

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def read(name):
    p = REAL / name if isinstance(name, str) else name
    return babelstream.read(p, p.read_text())


def cases(run):
    return {c.name: c for c in run.cases}


@pytest.mark.parametrize(
    "name,device,model",
    [
        ("babelstream_alpaka_llama_rtx2060_v4.0.txt", "NVIDIA GeForce RTX 2060", "alpaka"),
        ("babelstream_sycl_xeon6338_v5.0.txt", "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "SYCL"),
        ("babelstream_thrust_cuda_v100_v5.0.txt", "Tesla V100-PCIE-16GB", "CUDA"),  # "device:" with a colon
    ],
)
def test_every_model_names_its_device(name, device, model):
    run = read(name)
    assert run.gpu_name == device and run.context["device_from"] == f"Using {model} device"
    assert len(run.cases) == 5 and not any(c.error for c in run.cases)


@pytest.mark.parametrize(
    "name,implementation",
    [
        ("babelstream_tbb_cascadelake_v4.0.txt", "TBB"),  # "Using TBB partitioner: ..." is no device
        ("babelstream_omp_cascadelake_oneapi_v4.0.txt", "OpenMP"),
        ("babelstream_stddata_cascadelake_v4.0.txt", "STD (data-oriented)"),
        ("babelstream_std-indices_radeonvii_host_resident_v4.0.txt", "STD (index-oriented)"),
    ],
)
def test_models_without_a_device_line_say_so(name, implementation):
    run = read(name)
    assert run.gpu_name is None and len(run.cases) == 5
    assert f"the device name ({implementation} prints no 'Using ... device' line)" in run.not_read


def test_ten_digit_bandwidths_reach_the_column_edge():
    c = cases(read("babelstream_std-indices_radeonvii_utpx_preload_v4.0.txt"))
    assert c["stream/copy/fp64/cache:hot/bytes:268435456"].counters["bytes_per_second"] == pytest.approx(845300.937e6)


def test_two_runs_of_two_models_in_one_file_are_told_apart():
    run = read("babelstream_sycl2020acc_sycl2020usm_xeon6338_v5.0.txt")
    c = cases(run)
    assert len(run.cases) == 10
    acc = c["stream/triad/fp64/cache:hot/bytes:1073741824/model:sycl2020_accessors"]
    usm = c["stream/triad/fp64/cache:hot/bytes:1073741824/model:sycl2020_usm"]
    assert acc.counters["bytes_per_second"] == pytest.approx(158399.839e6)
    assert usm.counters["bytes_per_second"] == pytest.approx(167202.192e6)
    assert run.context["implementation"] == "SYCL2020 accessors (line 1); SYCL2020 USM (line 21)"


def test_synthetic_two_runs_of_one_model_are_repetitions(tmp_path):
    text = (REAL / "babelstream_sycl_xeon6338_v5.0.txt").read_text()
    p = tmp_path / "synthetic_twice.txt"
    p.write_text(text + "\n" + text)
    run = read(p)
    assert len(run.cases) == 10 and len(cases(run)) == 5
    assert run.context["runs"] == "2 runs of SYCL in one file: kept as repetitions"


def test_a_run_under_nsight_compute_is_no_measurement():
    run = read("babelstream_cuda_a100_ncu_wrapped_PROF_lines_v5.0.txt")
    c = cases(run)
    assert len(run.cases) == 5 and all(x.error and not x.counters for x in run.cases)
    add = c["stream/add/fp64/cache:hot/bytes:268435456"].error
    assert add.startswith("run under a profiler (Nsight Compute, ==PROF== at line 8)")
    assert "profiled add_kernel 100 times" in add and "614.751 MBytes/sec" in add
    copy = c["stream/copy/fp64/cache:hot/bytes:268435456"].error
    assert "1309438.055 MBytes/sec" in copy and "not taken as a measurement" in copy
    assert "Nsight Compute" in run.context["profiler"]


def test_validation_failures_stay_errors():
    run = read("babelstream_acc_cpu_skylake_validation_failed_v4.0.txt")
    assert len(run.cases) == 5 and all(
        c.error.startswith("BabelStream's validation failed: Validation failed on a[]") for c in run.cases
    )


def test_a_run_that_died_before_its_table_is_refused_naming_the_error():
    with pytest.raises(
        PeerFormatError,
        match=r"invalid_device_ordinal_v5\.0\.txt:8: expected .*the run failed before it: 'Error: invalid",
    ):
        read("babelstream_hip_error_invalid_device_ordinal_v5.0.txt")


def test_synthetic_run_under_nvprof_is_no_measurement(tmp_path):
    text = (REAL / "babelstream_a100_sxm4_80gb_v5.0.txt").read_text()
    p = tmp_path / "synthetic_nvprof.txt"
    p.write_text("==4242== NVPROF is profiling process 4242, command: ./cuda-stream\n" + text)
    run = read(p)
    assert all(c.error.startswith("run under a profiler (nvprof, ==<pid>== at line 1)") for c in run.cases)
