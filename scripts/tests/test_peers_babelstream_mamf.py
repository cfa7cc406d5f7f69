"""BabelStream and mamf-finder readers: the real BabelStream 5.0 table and mamf-finder v1 log read
in place; synthetic variants (made here, named so) from the tools' source formats: BabelStream's
--csv, the newer "Number of elements" text, a failed validation, the triad-only summary; mamf-finder
v2 and v4 summaries with per-shape lines."""

from pathlib import Path

import pytest

from triaudit.peers import babelstream, mamf
from triaudit.peers.model import PeerFormatError

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def cases(run):
    return {c.name: c for c in run.cases}


def test_real_babelstream_50_table():
    p = REAL / "babelstream_a100_sxm4_80gb_v5.0.txt"
    run = babelstream.read(p, p.read_text())
    c = cases(run)
    assert run.version == "5.0" and run.gpu_name == "NVIDIA A100-SXM4-80GB" and run.context["driver"] == "12030"
    # 268.4 MB printed: the one power of two of doubles that fits is 2^25 elements = 268435456 bytes.
    assert c["stream/triad/fp64/cache:hot/bytes:268435456"].counters["bytes_per_second"] == pytest.approx(1724827.354e6)
    assert c["stream/copy/fp64/cache:hot/bytes:268435456"].counters["bytes_per_second"] == pytest.approx(1709360.800e6)
    assert c["stream/scale/fp64/cache:hot/bytes:268435456"].counters["time_min_s"] == pytest.approx(0.00032)
    assert c["stream/triad/fp64/cache:hot/bytes:268435456"].time_s == pytest.approx(0.00047)
    assert set(c) == {f"stream/{op}/fp64/cache:hot/bytes:268435456" for op in ("copy", "scale", "add", "triad", "dot")}
    assert "inferred" in run.context["array_bytes_from"]
    assert run.statistic.startswith("best of 100 runs")


SYNTHETIC_CSV = """Using CUDA device NVIDIA H200
Driver: 12080
Memory: DEFAULT
Reduction kernel config: 528 groups of (fixed) size 1024
phase,n_elements,sizeof,max_mbytes_per_sec,runtime
Init,268435456,4,1000.0,3.2
Read,268435456,4,1000.0,3.2
function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime
Copy,100,268435456,4,4000000.0,0.000536870912,0.00055,0.00054
Mul,100,268435456,4,3900000.0,0.000550636832,0.00056,0.000555
Add,100,268435456,4,4100000.0,0.000785664,0.0008,0.00079
Triad,100,268435456,4,4150000.0,0.000776195575,0.0008,0.00079
Dot,100,268435456,4,3800000.0,0.000565127276,0.0006,0.00058
"""


def test_synthetic_csv_has_exact_sizes_and_checks_byte_weights(tmp_path):
    p = tmp_path / "synthetic_babelstream.csv"
    p.write_text(SYNTHETIC_CSV)
    run = babelstream.read(p, p.read_text())
    c = cases(run)
    assert c["stream/triad/fp32/cache:hot/bytes:1073741824"].counters["bytes_per_second"] == pytest.approx(4.15e12)
    assert run.gpu_name == "NVIDIA H200" and run.context["array_bytes_from"].startswith("n_elements")
    # A printed bandwidth that is not the STREAM bytes over the minimum time (a development version
    # swapped the Add and Mul weights) is an error entry, not a number.
    p.write_text(SYNTHETIC_CSV.replace("Add,100,268435456,4,4100000.0", "Add,100,268435456,4,2733333.3"))
    c = cases(babelstream.read(p, p.read_text()))
    assert "implies 2.00 arrays moved per element, not 3" in c["stream/add/fp32/cache:hot/bytes:1073741824"].error
    p.write_text(SYNTHETIC_CSV.replace("Dot,100,268435456,4,3800000.0,0.000565127276,0.0006,0.00058", "Dot,100,2684"))
    with pytest.raises(PeerFormatError, match=r"synthetic_babelstream\.csv:13: expected 8 comma-separated values"):
        babelstream.read(p, p.read_text())


def test_synthetic_newer_text_with_failed_validation_and_triad_only(tmp_path):
    text = (REAL / "babelstream_a100_sxm4_80gb_v5.0.txt").read_text()
    text = text.replace("Precision: double", "Number of elements: 33554432\nPrecision: double")
    text += "\nValidation failed on sum. Error 0.5\n"
    p = tmp_path / "synthetic_babelstream.txt"
    p.write_text(text)
    c = cases(babelstream.read(p, p.read_text()))
    assert c["stream/dot/fp64/cache:hot/bytes:268435456"].error.startswith("BabelStream's validation failed")
    assert c["stream/triad/fp64/cache:hot/bytes:268435456"].counters["bytes_per_second"] > 0
    triad_only = (
        "BabelStream\nVersion: 5.0\nImplementation: CUDA\nRunning triad 100 times\nNumber of elements: "
        "33554432\nPrecision: double\nArray size: 268.4 MB (=0.3 GB)\nTotal size: 805.3 MB (=0.8 GB)\n"
        "Using CUDA device NVIDIA H200\n--------------------------------\nRuntime (seconds): 0.02000\n"
        "Bandwidth (GB/s):  4026.532\n"
    )
    p.write_text(triad_only)
    run = babelstream.read(p, p.read_text())
    assert cases(run)["stream/triad/fp64/cache:hot/bytes:268435456"].counters["bytes_per_second"] == pytest.approx(
        4026.532e9
    )
    assert run.statistic.startswith("mean of 100 back-to-back triads")


def test_babelstream_cut_or_foreign_output_is_refused(tmp_path):
    lines = (REAL / "babelstream_a100_sxm4_80gb_v5.0.txt").read_text().splitlines()
    p = tmp_path / "cut.txt"
    p.write_text("\n".join(lines[:14]) + "\n" + lines[14][:20] + "\n")
    with pytest.raises(PeerFormatError, match=r"cut\.txt:15: expected 5 columns"):
        babelstream.read(p, p.read_text())
    p.write_text("\n".join(lines[:14]) + "\n")
    with pytest.raises(PeerFormatError, match=r"cut\.txt:15: expected kernel rows after the header"):
        babelstream.read(p, p.read_text())
    p.write_text("\n".join(lines[:13]) + "\n")
    with pytest.raises(PeerFormatError, match=r"cut\.txt:13: expected BabelStream's results header"):
        babelstream.read(p, p.read_text())
    p.write_text("hello\n")
    with pytest.raises(PeerFormatError, match="Precision"):
        babelstream.read(p, p.read_text())


def test_real_mamf_finder_v1_log():
    p = REAL / "mamf_gh200.txt"
    run = mamf.read(p, p.read_text())
    c = cases(run)["gemm/ceiling/bf16/burst"]
    assert c.counters["flops"] == pytest.approx(821.0e12) and c.counters["shapes_tried"] == 493039
    assert "11264x19712x1536" in c.label and "N is shared" in c.label
    assert run.gpu_name == "NVIDIA GH200 480GB" and run.context["torch_version"] == "2.4.0a0+f70bd71a48.nv24.06"
    assert run.context["elapsed"] == "2 days, 14:42:00" and run.version == "benchmark version 1"
    assert c.statistic == "max over shapes of the fastest of 100 iterations per shape (CUDA events per GEMM)"


HEADER = """
Benchmark started on 2025-05-03 06:17:43

** Command line:
/usr/bin/python ./mamf-finder.py --dtype bfloat16 --m_range 4096 8193 4096 --n_range 4096 8193 4096 --k_range 4096 8193 4096 --output_file=synthetic.txt

** Dtype: torch.bfloat16

** Platform/Device info:
Linux synthetic 6.8.0 #1 SMP x86_64 x86_64
_CudaDeviceProperties(name='NVIDIA H200', major=9, minor=0, total_memory=143171MB, multi_processor_count=132)

** Critical software versions:
torch=2.6.0+cu126
cuda=12.6

** Additional notes:
benchmark version: {version}

--------------------------------------------------------------------------------

"""


def test_synthetic_mamf_v2_with_per_shape_lines(tmp_path):
    body = (
        "Warming up the accelerator for 30 secs ... accelerator warmup finished\n"
        "     1 |  700.0(mean)  702.0(median)  720.0(max) @ 4096x4096x4096      | best: ...\n"
        "     2 |  740.0(mean)  741.0(median)  760.0(max) @ 4096x8192x4096      | best: ...\n"
        "\nTried  2 shapes => the best outcomes were:\n"
        "mean:   740.0 TFLOPS @ 4096x8192x4096 (MxNxK)\nmedian: 741.0 TFLOPS @ 4096x8192x4096 (MxNxK)\n"
        "max:    760.0 TFLOPS @ 4096x8192x4096 (MxNxK)\n\n"
        "geomean: 719.7 TFLOPS for 2 shapes in range: m=[4096, 8193, 4096] | n=[4096, 8193, 4096]\n\n"
        "Legend: TFLOPS = 10**12 FLOPS\nElapsed time: 0:01:10\n"
    )
    p = tmp_path / "synthetic_mamf_v2.txt"
    p.write_text(HEADER.format(version=2) + body)
    run = mamf.read(p, p.read_text())
    c = cases(run)
    assert c["gemm/ceiling/bf16/burst"].counters["flops"] == pytest.approx(760e12)
    assert c["gemm/ceiling/bf16/best_mean"].counters["flops"] == pytest.approx(740e12)
    assert "mean of 100 iterations" in c["gemm/ceiling/bf16/best_mean"].statistic
    shape = c["gemm/torch/bf16/layout:tn/m:4096/n:8192/k:4096"]
    assert shape.counters == pytest.approx({"flops": 741e12, "flops_mean": 740e12, "flops_max": 760e12})
    p.write_text(HEADER.format(version=2) + body.split("Tried")[0])
    with pytest.raises(PeerFormatError, match=r"synthetic_mamf_v2\.txt:\d+: expected mamf-finder's final summary"):
        mamf.read(p, p.read_text())


def test_synthetic_mamf_v4_mamf_and_msmf(tmp_path):
    body = (
        "\n** Results:\n\nTried 24 shapes => the best outcomes were:\n"
        "MAMF (max achievable,  boost burst): 842 TFLOPS @ 3072x2816x20480 (MxNxK)  172W 1980MHz\n"
        "MSMF (max sustainable, saturated):   n/a\n\nElapsed time: 0:20:00\n"
    )
    p = tmp_path / "synthetic_mamf_v4.txt"
    p.write_text(HEADER.format(version=4) + body)
    run = mamf.read(p, p.read_text())
    c = cases(run)["gemm/ceiling/bf16/burst"]
    assert c.counters["flops"] == pytest.approx(842e12) and c.counters["watts_mean"] == 172
    assert c.counters["sm_clock_mhz"] == 1980 and "5 fastest boost-clock iterations" in c.statistic
    assert "gemm/ceiling/bf16/sustained" not in cases(run)
    assert any("MSMF headline" in n for n in run.not_read)
    p.write_text(HEADER.format(version=4).replace("** Dtype: torch.bfloat16\n", "") + body)
    with pytest.raises(PeerFormatError, match="Dtype"):
        mamf.read(p, p.read_text())
