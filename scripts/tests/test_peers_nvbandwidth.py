"""nvbandwidth reader: the real v0.8 output and the README's older matrix read in place; synthetic
variants (made here, named so) of the newest text (N/A, SUM lines, a bidirectional test's three
matrices, a waived test) and of the -j JSON, written from output.cpp / json_output.cpp / common.h."""

import json
from pathlib import Path

import pytest

from triaudit.peers import nvbandwidth
from triaudit.peers.model import PeerFormatError

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


def read(path, **kw):
    return nvbandwidth.read(path, path.read_text(), **kw)


def cases(run):
    return {c.name: c for c in run.cases}


def test_real_v08_sm_host_copy():
    run = read(REAL / "nvbandwidth_a100_sxm4_40gb_h2d_sm.txt")
    assert run.version == "v0.8" and run.gpu_name == "NVIDIA A100-SXM4-40GB"
    assert run.context["driver_version"] == "560.35.05"
    assert [c.name for c in run.cases] == ["memcpy/h2d/zero_copy/device:0"]
    assert run.cases[0].counters["bytes_per_second"] == pytest.approx(25.13e9)
    assert "median of 3 samples of 16 copies" in run.statistic
    assert any("copy size" in n for n in run.not_read)


def test_real_readme_matrix_diagonal_zero_is_not_a_bandwidth():
    run = read(REAL / "nvbandwidth_readme_8gpu_d2d_write_ce.txt", buffer_bytes=512 << 20)
    c = cases(run)
    assert len(run.cases) == 56  # 8 x 8 less the diagonal's 0.00
    assert c["p2p/ce/uni/src:0/dst:1/bytes:536870912"].counters["bytes_per_second"] == pytest.approx(276.07e9)
    assert c["p2p/ce/uni/src:6/dst:0/bytes:536870912"].counters["bytes_per_second"] == pytest.approx(274.89e9)
    assert not any("src:3/dst:3" in n for n in c)
    assert run.gpu_name is None and run.version is None
    assert any("GPU name" in n for n in run.not_read) and "given with --buffer-size" in run.context["copy_size_bytes"]


SYNTHETIC_TEXT = """nvbandwidth Version: v0.9
Built from Git version: synthetic

CUDA Runtime Version: 12080
CUDA Driver Version: 12080
Driver Version: 570.00.00

Device 0: NVIDIA H200 (00000000:19:00)
Device 1: NVIDIA H200 (00000000:3b:00)

Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0     55.40     55.10

SUM host_to_device_memcpy_ce 110.50

Running device_to_device_bidirectional_memcpy_write_ce.
memcpy CE CPU(row) <-> GPU(column) Read1 bandwidth (GB/s)
           0         1
 0       N/A    370.00
 1    371.00       N/A

SUM device_to_device_bidirectional_memcpy_write_ce_write1 741.00
memcpy CE CPU(row) <-> GPU(column) Read2 bandwidth (GB/s)
           0         1
 0       N/A    360.00
 1    361.00       N/A

SUM device_to_device_bidirectional_memcpy_write_ce_write2 721.00
memcpy CE CPU(row) <-> GPU(column) Total bandwidth (GB/s)
           0         1
 0       N/A    730.00
 1    732.00       N/A

SUM device_to_device_bidirectional_memcpy_write_ce_total 1462.00

Running all_to_one_write_ce.
Waived: 
Running device_local_copy.
memcpy local GPU(column) bandwidth (GB/s)
           0         1
 0   2100.00   2105.00

&&&& PERF device_local_copy 4205.00 +GB/s

NOTE: The reported results may not reflect the full capabilities of the platform.
"""


def test_synthetic_newest_text_bidirectional_waived_and_perf_lines(tmp_path):
    p = tmp_path / "synthetic_nvbandwidth.txt"
    p.write_text(SYNTHETIC_TEXT)
    run = read(p, buffer_bytes=256 << 20)
    c = cases(run)
    assert c["memcpy/h2d/pinned/device:1/bytes:268435456"].counters["bytes_per_second"] == pytest.approx(55.1e9)
    # Bidirectional write: the first copy goes column -> row, the second row -> column.
    bi = c["p2p/ce/bidir/src:1/dst:0/bytes:268435456"].counters
    assert bi["bytes_per_second"] == pytest.approx(370e9)
    assert bi["bytes_per_second_reverse"] == pytest.approx(360e9)
    assert bi["bytes_per_second_total"] == pytest.approx(730e9)
    assert c["memcpy/d2d/copy_engine/device:0/bytes:268435456"].counters["bytes_per_second"] == pytest.approx(2100e9)
    assert "all_to_one_write_ce (waived)" in run.context["left_out"]
    assert run.gpu_name == "NVIDIA H200" and "00000000:3b:00" in run.context["devices"]


def synthetic_json() -> dict:
    """What JsonOutput (json_output.cpp) writes: values as strings, a bidirectional test's three
    matrices appended into one list, errors per testcase."""
    return {
        "nvbandwidth": {
            "version": "v0.8",
            "git_version": "synthetic",
            "CUDA Runtime Version": 12060,
            "Driver Version": "560.35.05",
            "GPU Device list": [
                "0: NVIDIA H200 (00000000:19:00): (synthetic-host)",
                "1: NVIDIA H200 (00000000:3b:00): (synthetic-host)",
            ],
            "testcases": [
                {
                    "name": "device_to_host_memcpy_ce",
                    "status": "Passed",
                    "bandwidth_description": "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)",
                    "bandwidth_matrix": [["55.2", "55.3"]],
                    "sum": 110.5,
                },
                {
                    "name": "device_to_device_bidirectional_memcpy_read_sm",
                    "status": "Passed",
                    "bandwidth_description": "memcpy SM GPU(row) <-> GPU(column) Total bandwidth (GB/s)",
                    "bandwidth_matrix": [
                        ["N/A", "350"],
                        ["351", "N/A"],
                        ["N/A", "340"],
                        ["341", "N/A"],
                        ["N/A", "690"],
                        ["692", "N/A"],
                    ],
                    "sum": 1382,
                },
                {
                    "name": "device_to_device_memcpy_write_ce",
                    "status": "Error",
                    "error": "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
                },
            ],
        }
    }


def test_synthetic_json(tmp_path):
    p = tmp_path / "synthetic_nvbandwidth.json"
    p.write_text(json.dumps(synthetic_json(), indent=3))
    run = read(p)
    c = cases(run)
    assert c["memcpy/d2h/pinned/device:1"].counters["bytes_per_second"] == pytest.approx(55.3e9)
    bi = c["p2p/sm_read/bidir/src:0/dst:1"].counters
    assert bi["bytes_per_second"] == pytest.approx(351e9) and bi["bytes_per_second_total"] == pytest.approx(692e9)
    err = c["nvbandwidth_test/device_to_device_memcpy_write_ce"]
    assert err.error == "nvbandwidth: Error: CUDA_ERROR_OUT_OF_MEMORY: out of memory" and not err.counters
    assert run.gpu_name == "NVIDIA H200" and run.version == "v0.8"
    p.write_text(json.dumps(synthetic_json(), indent=3)[:400])
    with pytest.raises(PeerFormatError, match=r"synthetic_nvbandwidth\.json:\d+: expected nvbandwidth JSON"):
        read(p)


def test_truncated_and_malformed_outputs_are_refused(tmp_path):
    text = (REAL / "nvbandwidth_a100_sxm4_40gb_h2d_sm.txt").read_text()
    p = tmp_path / "cut.txt"
    p.write_text(text.split("memcpy SM")[0])
    with pytest.raises(
        PeerFormatError, match=r"cut\.txt:10: expected the bandwidth matrix of host_to_device_memcpy_sm"
    ):
        read(p)
    p.write_text(text.replace(" 0     25.13", " 0     25.13     26.0"))
    with pytest.raises(PeerFormatError, match=r"cut\.txt:13: expected a matrix row: a label and 1 values"):
        read(p)
    p.write_text(text.replace("25.13\n", "2x.13\n", 1))
    with pytest.raises(PeerFormatError, match=r"cut\.txt:13: expected numbers or N/A"):
        read(p)
    p.write_text("nothing here\n")
    with pytest.raises(PeerFormatError, match="expected nvbandwidth output"):
        read(p)
