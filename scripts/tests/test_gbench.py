import json
import math
from pathlib import Path

import pytest
from conftest import real_result_files
from hypothesis import given, settings
from hypothesis import strategies as st

from triaudit.results.gbench import LoadError, case_name, load_result, parse_result


def test_case_name_strips_google_benchmark_suffixes():
    assert case_name("stream/triad/fp32/cache:cold/bytes:1024/manual_time") == "stream/triad/fp32/cache:cold/bytes:1024"
    assert case_name("stream/copy/fp64/bytes:8/repeats:5/min_time:0.050/manual_time") == "stream/copy/fp64/bytes:8"
    assert case_name("stream/copy/fp64/bytes:8/threads:1/real_time") == "stream/copy/fp64/bytes:8"


def test_real_no_gpu_output_is_all_skipped(no_gpu_json):
    rf = load_result(no_gpu_json)
    assert rf.context["gpu_available"] == "false"
    assert rf.runs, "no cases in the no-GPU JSON"
    assert all(r.status == "skipped" for r in rf.runs)
    assert all(r.message.startswith("skipped: no CUDA device (") for r in rf.runs)
    assert all(not r.counters for r in rf.runs)
    assert {r.case.split("/")[0] for r in rf.runs} == {"stream"}


@pytest.mark.parametrize("path", real_result_files(), ids=str)
def test_committed_results_load(path):
    rf = load_result(path)
    assert rf.runs
    for r in rf.runs:
        if r.status == "ok" and r.case.startswith("stream/"):
            assert r.counters["bytes_per_second"] > 0


def _entry(**kw):
    e = {
        "name": "stream/copy/fp32/cache:hot/bytes:1024/manual_time",
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "iterations": 10,
        "real_time": 2.0,
        "cpu_time": 1.0,
        "time_unit": "us",
        "bytes_per_second": 1e12,
    }
    e.update(kw)
    return e


def test_versions_skip_and_error_forms(tmp_path):
    data = {
        "context": {},
        "benchmarks": [
            _entry(),
            _entry(name="a/b/c/x:1", error_occurred=True, error_message="skipped: too little memory"),  # 1.7 skip
            _entry(name="a/b/c/x:2", skipped=True, skip_message="skipped: no device"),  # 1.8+ skip
            _entry(name="a/b/c/x:3", error_occurred=True, error_message="verification failed: 3 wrong"),
        ],
    }
    rf = parse_result(data, tmp_path / "x.json")
    assert [r.status for r in rf.runs] == ["ok", "skipped", "skipped", "error"]
    assert rf.runs[0].time_s == pytest.approx(2e-6)
    assert rf.runs[0].counters == {"bytes_per_second": 1e12}
    assert rf.runs[3].message.startswith("verification failed")


def test_nan_and_infinity_literals(tmp_path):
    p = tmp_path / "nan.json"
    p.write_text(
        '{"context": {}, "benchmarks": [{"name": "a/b/c", "run_type": "iteration", "real_time": 1.0,'
        ' "time_unit": "ns", "iterations": 1, "x": NaN, "y": Infinity, "z": -Infinity}]}'
    )
    r = load_result(p).runs[0]
    # The literals parse; a non-finite measurement makes the case an error naming each counter.
    assert r.status == "error" and not r.counters and math.isnan(r.time_s)
    assert "x is NaN, y is Infinity, z is -Infinity" in r.message and "nan.json" in r.message


@pytest.mark.parametrize(
    "text,needle",
    [
        ("", "empty file"),
        ("[1, 2]", "top level is not a JSON object"),
        ('{"context": {}}', "no 'benchmarks' array"),
        ('{"benchmarks": {}}', "'benchmarks' is not an array"),
        ('{"benchmarks": [{"run_type": "iteration"}]}', "has no name"),
        ('{"benchmarks": [{"name": "a/b/c", "real_time": "fast", "time_unit": "ns"}]}', "real_time is not a number"),
        ('{"benchmarks": [{"name": "a/b/c", "real_time": 1, "time_unit": "parsecs"}]}', "unknown time_unit"),
        (
            '{"benchmarks": [{"name": "a/b/c", "real_time": 1, "time_unit": ["us"]}]}',
            "unknown time_unit",
        ),  # was a TypeError
    ],
)
def test_malformed_files_are_refused_with_name_and_reason(tmp_path, text, needle):
    p = tmp_path / "broken_result.json"
    p.write_text(text)
    with pytest.raises(LoadError) as e:
        load_result(p)
    assert "broken_result.json" in str(e.value) and needle in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(LoadError, match="cannot be read"):
        load_result(tmp_path / "nope.json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=20,
)
entry_like = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(st.text(max_size=12), st.integers()),
        "run_type": st.sampled_from(["iteration", "aggregate", "x"]),
        "real_time": json_values,
        "time_unit": st.sampled_from(["ns", "us", "ms", "s", "h"]),
        "iterations": json_values,
        "error_occurred": json_values,
        "error_message": json_values,
        "skipped": json_values,
        "counter": json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        json_values,
        st.fixed_dictionaries({"benchmarks": st.lists(entry_like, max_size=5)}, optional={"context": json_values}),
    )
)
def test_loader_never_fails_with_anything_but_loaderror(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("h") / "fuzzed.json"
    p.write_text(json.dumps(data))
    try:
        rf = load_result(p)
    except LoadError as e:
        assert "fuzzed.json" in str(e)
    else:
        assert all(r.status in ("ok", "skipped", "error") for r in rf.runs)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_loader_refuses_arbitrary_bytes_cleanly(tmp_path_factory, blob):
    p = tmp_path_factory.mktemp("b") / "garbage.json"
    p.write_bytes(blob)
    try:
        load_result(p)
    except LoadError as e:
        assert "garbage.json" in str(e)


def test_counters_keep_the_files_order():
    """The tidy table (and tidy.csv) lists a case's counters as the file does, whatever the
    interpreter's string hashing (they came out in set order before: a different file each run)."""
    names = [f"counter_{c}" for c in "zyxwvutsrqponmlkjihgfedcba"]
    entry = _entry(**{n: float(i) for i, n in enumerate(names)})
    rf = parse_result({"context": {}, "benchmarks": [entry]}, Path("order.json"))
    assert [k for k in rf.runs[0].counters if k.startswith("counter_")] == names


def test_an_integer_too_large_for_a_float_is_not_a_measurement(tmp_path):
    # JSON integers have no size limit; float() of one with 400 digits raised OverflowError (a traceback).
    p = tmp_path / "huge.json"
    big = "1" + "0" * 400
    p.write_text(
        '{"context": {}, "benchmarks": ['
        f'{{"name": "a/b/c", "run_type": "iteration", "real_time": 1.0, "time_unit": "ns", "iterations": 1, "x": {big}}},'
        f'{{"name": "a/b/d", "run_type": "iteration", "real_time": {big}, "time_unit": "ns", "iterations": 1}}]}}'
    )
    a, b = load_result(p).runs
    assert a.status == "error" and "x is too large for a float" in a.message and "huge.json" in a.message
    assert b.status == "error" and "real_time is too large for a float" in b.message


def test_a_file_cut_off_after_its_context_is_read_with_a_warning(tmp_path):
    """A killed writer leaves `{"context": {...}, "benchmarks": [` and whole entries: read, not refused."""
    p = tmp_path / "cut_synthetic.json"
    p.write_text('{"context": {"gpu_name": "Synthetic"}, "benchmarks": [')
    rf = load_result(p)
    assert rf.runs == [] and any("0 whole benchmark entries read" in n for n in rf.notes)
    assert all(str(p) in n for n in rf.notes if "whole benchmark" in n)
