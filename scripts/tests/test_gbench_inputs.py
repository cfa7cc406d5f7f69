"""The loader on google/benchmark's own test inputs (real Google Benchmark JSON of several versions,
in data/gbench/, google/benchmark's own tools/gbench/Inputs) and on synthetic variants of what those files lack."""

import json
import math
from pathlib import Path

import pytest

from triaudit.results.gbench import LoadError, load_result, parse_result

GBENCH = Path(__file__).parent / "data" / "gbench"  # google/benchmark's own inputs (SOURCE.txt)


@pytest.mark.parametrize("name", sorted(p.name for p in GBENCH.glob("*.json")) if GBENCH.is_dir() else [])
def test_every_real_input_loads_or_is_refused_by_name(name):
    try:
        rf = load_result(GBENCH / name)
    except LoadError as e:
        assert name in str(e)
    else:
        assert all(r.status in ("ok", "skipped", "error") for r in rf.runs)


def test_complexity_rows_are_skipped_and_counted_not_fatal():
    # test1_run1.json ends with ->Complexity() output: a BigO and an RMS row without real_time.
    rf = load_result(GBENCH / "test1_run1.json")
    assert rf.skipped_rows == {"complexity (BigO/RMS)": 2}
    assert any("2 complexity" in n for n in rf.notes)
    cases = {r.case: r for r in rf.runs}
    assert "MyComplexityTest_BigO" not in cases and "MyComplexityTest_RMS" not in cases
    assert cases["BM_2xFaster"].time_s == pytest.approx(50e-9)
    assert cases["BM_hasLabel"].label == "a label"
    assert len(rf.runs) == 14


def test_old_repetitions_without_an_index_are_a_conflict_not_pooled():
    # test3_run0.json (Google Benchmark of 2016) repeats BM_Two without repetition_index: rows that
    # cannot be told apart from a duplicated case are not pooled.
    rf = load_result(GBENCH / "test3_run0.json")
    two = [r for r in rf.runs if r.case == "BM_Two" and r.run_type == "iteration"]
    assert two and all(r.status == "error" for r in two)
    assert "conflict" in two[0].message and "test3_run0.json" in two[0].message
    assert "2 rows" in two[0].message


def _row(name="stream/copy/fp32/cache:hot/bytes:1024", rep=0, reps=1, **kw):
    e = {
        "name": name + "/manual_time",
        "run_name": name + "/manual_time",
        "run_type": "iteration",
        "repetitions": reps,
        "repetition_index": rep,
        "iterations": 10,
        "real_time": 2.0,
        "cpu_time": 1.0,
        "time_unit": "us",
        "bytes_per_second": 1e12,
    }
    e.update(kw)
    return e


def test_a_duplicated_repetition_is_a_conflict_naming_the_file(tmp_path):
    # The same case and repetition twice, the second 10x worse: not one case with a wide spread.
    data = {
        "context": {},
        "benchmarks": [_row(rep=0, reps=2), _row(rep=1, reps=2), _row(rep=1, reps=2, bytes_per_second=1e11)],
    }
    rf = parse_result(data, tmp_path / "dup_synthetic.json")
    assert {r.status for r in rf.runs} == {"error"}
    assert "conflict" in rf.runs[0].message and "repetition 1" in rf.runs[0].message
    assert "dup_synthetic.json" in rf.runs[0].message


def test_repetitions_with_distinct_indices_are_kept(tmp_path):
    data = {"context": {}, "benchmarks": [_row(rep=i, reps=3) for i in range(3)]}
    rf = parse_result(data, tmp_path / "reps_synthetic.json")
    assert [r.status for r in rf.runs] == ["ok"] * 3


def test_infinity_in_a_counter_makes_the_case_an_error(tmp_path):
    p = tmp_path / "inf_synthetic.json"
    p.write_text(
        '{"context": {}, "benchmarks": ['
        + json.dumps(_row(name="gemm/cublaslt/bf16/m:1/n:1/k:1")).replace(
            '"bytes_per_second": 1000000000000.0', '"flops": Infinity'
        )
        + "]}"
    )
    r = load_result(p).runs[0]
    assert r.status == "error" and "flops is Infinity" in r.message
    assert "inf_synthetic.json" in r.message and "gemm/cublaslt/bf16/m:1/n:1/k:1" in r.message
    assert not r.counters


def test_nan_time_or_throughput_is_an_error_but_nan_energy_is_unknown(tmp_path):
    p = tmp_path / "nan_synthetic.json"
    rows = [
        json.dumps(_row(name="a/b/c/x:1")).replace('"real_time": 2.0', '"real_time": NaN'),
        json.dumps(_row(name="a/b/c/x:2")).replace('"bytes_per_second": 1000000000000.0', '"bytes_per_second": NaN'),
        json.dumps(_row(name="a/b/c/x:3", joules_per_op=1.0)).replace('"joules_per_op": 1.0', '"joules_per_op": NaN'),
    ]
    p.write_text('{"context": {}, "benchmarks": [' + ", ".join(rows) + "]}")
    r1, r2, r3 = load_result(p).runs
    # A NaN time alone leaves the case standing on its throughput counter (peer tools that print
    # no time are imported so); see the next assertion for a NaN throughput.
    assert r1.status == "ok" and math.isnan(r1.time_s) and r1.counters["bytes_per_second"] == 1e12
    assert r2.status == "error" and "bytes_per_second is NaN" in r2.message
    # Energy the board cannot report: the counter is unknown (absent), the case still measured.
    assert r3.status == "ok" and "joules_per_op" not in r3.counters and r3.counters["bytes_per_second"] == 1e12


def test_nvbench_json_is_named_as_such(tmp_path):
    # The shape nvbench's json_printer writes (devices, benchmarks with axes and states); synthetic.
    data = {
        "meta": {"argv": ["./bench", "--json", "out.json"]},
        "devices": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
        "benchmarks": [
            {
                "index": 0,
                "name": "copy",
                "min_samples": 10,
                "devices": [0],
                "axes": {},
                "states": [{"index": 0, "description": "", "device": 0, "summaries": {}, "is_skipped": False}],
            }
        ],
    }
    p = tmp_path / "nvbench_synthetic.json"
    p.write_text(json.dumps(data))
    with pytest.raises(LoadError, match=r"nvbench_synthetic.json: not Google Benchmark JSON \(looks like nvbench\)"):
        load_result(p)


def test_other_benchmark_json_is_refused_as_not_google_benchmark(tmp_path):
    # pytest-benchmark's shape (machine_info, benchmarks with stats); synthetic.
    data = {"machine_info": {"node": "x"}, "benchmarks": [{"name": "test_x", "stats": {"mean": 1.0}}]}
    p = tmp_path / "pytest_benchmark_synthetic.json"
    p.write_text(json.dumps(data))
    with pytest.raises(LoadError, match="not Google Benchmark JSON .looks like pytest-benchmark"):
        load_result(p)


def test_nan_time_without_a_throughput_counter_is_an_error(tmp_path):
    p = tmp_path / "nan_time_synthetic.json"
    row = (
        json.dumps(_row(name="launch/sync/x"))
        .replace('"real_time": 2.0', '"real_time": NaN')
        .replace(', "bytes_per_second": 1000000000000.0', "")
    )
    p.write_text('{"context": {}, "benchmarks": [' + row + "]}")
    r = load_result(p).runs[0]
    assert r.status == "error" and "real_time is NaN" in r.message and "launch/sync/x" in r.message


def test_a_case_whose_every_value_is_nan_is_listed_not_dropped(tmp_path):
    from triaudit.results.table import load_table

    p = tmp_path / "r" / "allnan_synthetic.json"
    p.parent.mkdir()
    rows = [
        json.dumps(_row(rep=i, reps=2)).replace('"bytes_per_second": 1000000000000.0', '"bytes_per_second": NaN')
        for i in range(2)
    ]
    p.write_text(
        '{"context": {"gpu_available": "true", "gpu_name": "Synthetic"}, "benchmarks": [' + ", ".join(rows) + "]}"
    )
    df = load_table([p])
    row = df[df["case"] == "stream/copy/fp32/cache:hot/bytes:1024"]
    assert len(row) == 1 and row.iloc[0]["status"] == "error" and "NaN" in row.iloc[0]["message"]
    assert not math.isnan(len(df))


def test_the_same_answer_without_orjson(tmp_path, monkeypatch):
    # orjson only makes loading faster; without it the standard library gives the same runs.
    from triaudit.results import gbench

    p = tmp_path / "reps_synthetic.json"
    p.write_text(json.dumps({"context": {"gpu_name": "x"}, "benchmarks": [_row(rep=i, reps=3) for i in range(3)]}))
    fast = load_result(p)
    monkeypatch.setattr(gbench, "_orjson", None)
    slow = load_result(p)
    assert [(r.case, r.repetition_index, r.time_s, r.counters) for r in fast.runs] == [
        (r.case, r.repetition_index, r.time_s, r.counters) for r in slow.runs
    ]


def test_schema_version_absent_is_fine_a_newer_one_is_said(tmp_path):
    from triaudit.results.gbench import SCHEMA_VERSION

    assert SCHEMA_VERSION == "2"
    rows = [_row(rep=0)]
    old = parse_result({"context": {}, "benchmarks": rows}, tmp_path / "old_synthetic.json")
    assert old.notes == [] and old.runs[0].status == "ok"
    one = parse_result(
        {"context": {"triaudit_schema_version": "1"}, "benchmarks": rows}, tmp_path / "one_synthetic.json"
    )
    assert one.notes == []  # an older schema is read (its renamed cases through legacy_names)
    new = parse_result(
        {"context": {"triaudit_schema_version": "3"}, "benchmarks": rows}, tmp_path / "new_synthetic.json"
    )
    assert new.runs[0].status == "ok"
    assert new.notes == ["new_synthetic.json: written with triaudit result schema 3; this triaudit reads 2"]
