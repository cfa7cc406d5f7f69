"""Exports checked against each format's published schema and examples."""

import json
import numbers

import pytest
from synthetic import synthetic_corners_result, write

from triaudit import commands as cli


# Bencher Metric Format, JSON Schema as published at https://bencher.dev/bmf.json: an object of
# benchmark objects of measure objects with a required number "value" and optional number
# "lower_value"/"upper_value" (further properties allowed).
def check_bmf(doc):
    assert isinstance(doc, dict) and doc
    for bench, measures in doc.items():
        assert isinstance(bench, str) and bench and len(bench) <= 1024
        assert isinstance(measures, dict) and measures
        for measure, metric in measures.items():
            assert isinstance(measure, str) and 0 < len(measure) <= 64
            assert isinstance(metric, dict) and isinstance(metric["value"], numbers.Real)
            for k in ("lower_value", "upper_value"):
                if k in metric:
                    assert isinstance(metric[k], numbers.Real)


# github-action-benchmark's custom tools read a JSON array of BenchmarkResult:
# {name: string, value: number, unit: string, range?: string, extra?: string} (src/extract.ts).
def check_gab(doc):
    assert isinstance(doc, list) and doc
    for e in doc:
        assert isinstance(e["name"], str) and isinstance(e["unit"], str) and isinstance(e["value"], numbers.Real)
        assert set(e) <= {"name", "value", "unit", "range", "extra"}
        for k in ("range", "extra"):
            if k in e:
                assert isinstance(e[k], str)


def test_the_checks_accept_the_formats_published_examples():
    check_bmf(
        {
            "benchmark_name": {
                "latency": {"value": 88.0, "lower_value": 87.42, "upper_value": 88.88},
                "throughput": {"value": 5.55, "lower_value": 3.14, "upper_value": 6.30},
            },
            "/bin/sh -c ./my_build_script.sh": {"build-time": {"value": 87.0}},
            "my_binary": {"file-size": {"value": 42.0}},
        }
    )
    check_gab(
        [
            {"name": "My Custom Smaller Is Better Benchmark - CPU Load", "unit": "Percent", "value": 50},
            {
                "name": "My Custom Smaller Is Better Benchmark - Memory Used",
                "unit": "Megabytes",
                "value": 100,
                "range": "3",
                "extra": "Value for Tooltip: 25\nOptional Num #2: 100\nAnything Else!",
            },
        ]
    )


@pytest.fixture
def run(tmp_path):
    d = tmp_path / "results" / "nvidia-h200" / "20260101T000000Z-synthetic"
    write(d / "synthetic_corners.json", synthetic_corners_result("NVIDIA H200"))
    (d / "manifest.json").write_text(json.dumps({"complete": True, "started_utc": "20260101T000000Z", "host": "h"}))
    return d


def test_bmf_one_entry_per_case_and_throughput_counter(run, tmp_path, capsys):
    assert cli.main(["export", str(run), "--format", "bmf", "--out", str(tmp_path / "ex")]) == 0
    doc = json.loads((tmp_path / "ex" / "bmf.json").read_text())
    check_bmf(doc)
    gemm = doc["gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192"]
    assert list(gemm) == ["flops"] and gemm["flops"]["value"] == pytest.approx(780e12, rel=1e-6)
    assert gemm["flops"]["lower_value"] < gemm["flops"]["value"] < gemm["flops"]["upper_value"]
    assert gemm["flops"]["triaudit_schema_version"] == "2"
    assert set(doc["allreduce/out_of_place/bf16/bytes:1073741824"]) == {"busbw", "algbw"}
    assert set(doc["memcpy/h2d/pinned/bytes:1073741824"]) == {"bytes-per-second"}
    assert set(doc["launch/chain/eager/kernels:10"]) == {"per-kernel-s"}
    assert set(doc["launch/empty/enqueue/kernels:512"]) == {"time-s"}  # nothing but its time


def test_github_action_benchmark_splits_bigger_and_smaller(run, tmp_path):
    assert cli.main(["export", str(run), "--format", "github-action-benchmark", "--out", str(tmp_path / "ex")]) == 0
    bigger = json.loads((tmp_path / "ex" / "bigger_is_better.json").read_text())
    smaller = json.loads((tmp_path / "ex" / "smaller_is_better.json").read_text())
    check_gab(bigger)
    check_gab(smaller)
    g = next(e for e in bigger if e["name"] == "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192 (flops)")
    assert g["unit"] == "TFLOP/s" and g["value"] == pytest.approx(780, rel=1e-6) and g["range"].startswith("± ")
    assert "card: NVIDIA H200" in g["extra"] and "triaudit_schema_version: 2" in g["extra"]
    h = next(e for e in bigger if e["name"] == "memcpy/h2d/pinned/bytes:1073741824 (bytes_per_second)")
    assert h["unit"] == "GB/s" and h["value"] == pytest.approx(55, rel=1e-6)
    assert all(e["unit"] == "us" for e in smaller)
    assert {e["name"] for e in smaller} >= {"launch/chain/graph/kernels:1000 (per_kernel_s)"}


def test_export_refuses_several_cards_and_says_why(tmp_path, run, capsys):
    write(
        tmp_path / "results" / "other" / "r" / "synthetic_h100.json", synthetic_corners_result("NVIDIA H100 80GB HBM3")
    )
    assert cli.main(["export", str(tmp_path / "results"), "--format", "bmf", "--out", str(tmp_path / "ex")]) == 2
    assert "one card" in capsys.readouterr().err
