"""columns.file_columns (numpy for plain cases) gives exactly what gbench's records give
(columns.reference_columns): the same cases, rows, order and bits, or the same LoadError. On real
Google Benchmark outputs, on synthetic files made to hit every branch (named so), and on random files."""

import copy
import math
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import _entry

from triaudit.results import columns
from triaudit.results.gbench import LoadError, read_json

SHARED = Path(__file__).parent / "data"  # the real outputs kept for the tests


def _bits(v):
    return struct.pack("<d", v) if isinstance(v, float) else v


def _outcome(fn, data, path):
    try:
        context, notes, cases, cols = fn(copy.deepcopy(data), path)
    except LoadError as e:
        return ("LoadError", str(e))
    return (context, notes, cases, {k: [_bits(v) for v in vals] for k, vals in cols.items()})


def _decoded(context, notes, cases, cols):
    return context, notes, cases, {k: [v[0][c] for c in v[1]] if isinstance(v, tuple) else v for k, v in cols.items()}


def _same(data, path=Path("synthetic.json")):
    fast = _outcome(columns.file_columns, data, path)
    ref = _outcome(columns._reference, data, path)
    assert fast == ref
    # Encoded for a worker's trip, the text columns decode to the same values.
    encoded = _outcome(lambda d, p: _decoded(*columns.file_columns(d, p, encoded=True)), data, path)
    assert encoded == ref
    return fast


def _it(name, rep, t=1.0, unit="us", **counters):
    """One repetition, its time as given (any JSON value) in `unit`."""
    return {**_entry(name, 0.0, rep, 3, **counters), "real_time": t, "time_unit": unit}


def _agg(name, kind, t=1.0, **counters):
    return {
        "name": f"{name}/manual_time_{kind}",
        "run_name": name + "/manual_time",
        "run_type": "aggregate",
        "repetitions": 3,
        "threads": 1,
        "aggregate_name": kind,
        "aggregate_unit": "time",
        "iterations": 3,
        "real_time": t,
        "cpu_time": 1.0,
        "time_unit": "us",
        **counters,
    }


def _case(name, values, aggregates=True, **extra):
    rows = [_it(name, r, t=v, flops=1e12 / v, watts_mean=300.0 + r, **extra) for r, v in enumerate(values)]
    if aggregates:
        rows += [_agg(name, k, t=values[0], flops=1e12) for k in ("mean", "median", "stddev", "cv")]
    return rows


def _file(*entries):
    return {
        "context": {"gpu_name": "Synthetic Card", "synthetic": "true"},
        "benchmarks": [e for x in entries for e in x],
    }


PLAIN = _file(_case("stream/copy/fp32/cache:hot/bytes:1024", [1.0, 1.5, 1.25]), _case("gemm/a/fp16", [2.0, 2.0]))


def test_plain_cases_take_the_fast_path_and_agree(monkeypatch):
    context, notes, cases, cols = _same(PLAIN)
    assert cases == ["stream/copy/fp32/cache:hot/bytes:1024", "gemm/a/fp16"]
    assert cols["metric"][:3] == ["time_s", "flops", "watts_mean"] and cols["reps"][0] == 3
    lo, med, hi = 1.0 * 1e-6, 1.25 * 1e-6, 1.5 * 1e-6
    assert cols["median"][0] == _bits(med) and cols["spread_pct"][0] == _bits((hi - lo) / med * 100)
    # No record was made: every case took the column-wise path.
    monkeypatch.setattr(columns, "entry_run", lambda *a: pytest.fail("a plain case went record by record"))
    assert columns.file_columns(copy.deepcopy(PLAIN), Path("synthetic.json"))[2] == cases


def _variant(edit):
    data = copy.deepcopy(PLAIN)
    edit(data["benchmarks"])
    return data


BRANCHES = {
    "skipped (1.8+)": lambda b: b[1].update(skipped=True, skip_message="skipped: no device"),
    "skipped (1.7)": lambda b: b[1].update(error_occurred=True, error_message="skipped: too little memory"),
    "errored": lambda b: b[0].update(error_occurred=True, error_message="verification failed, 3 wrong"),
    "aggregate errored": lambda b: b[4].update(error_occurred=True, error_message="x"),
    "NaN energy": lambda b: b[2].update(watts_mean=math.nan),
    "NaN energy everywhere": lambda b: [e.update(watts_mean=math.nan) for e in b[:3]],
    "Infinity counter": lambda b: b[0].update(flops=math.inf),
    "-Infinity time": lambda b: b[0].update(real_time=-math.inf),
    "NaN time, judged counter": lambda b: b[0].update(real_time=math.nan),
    "NaN time, no judged counter": lambda b: [b[0].update(real_time=math.nan), b[0].pop("flops")],
    "NaN median aggregate counter": lambda b: b[4].update(flops=math.nan),
    "Infinity mean aggregate time": lambda b: b[3].update(real_time=math.inf),
    "repeated repetition_index": lambda b: b[1].update(repetition_index=0),
    "no repetition_index": lambda b: [e.pop("repetition_index") for e in b[:3]],
    "float repetition_index": lambda b: b[1].update(repetition_index=1.0),
    "repeated aggregate": lambda b: b.insert(5, copy.deepcopy(b[4])),
    "string counter": lambda b: b[0].update(note="fast"),
    "bool counter": lambda b: [e.update(flag=True) for e in b[:3]],
    "integer counter": lambda b: [e.update(algo_id=7) for e in b[:3]],
    "huge integer counter": lambda b: b[0].update(big=10**400),
    "integer beyond int64": lambda b: [e.update(big=2**70 + i) for i, e in enumerate(b[:3])],
    "counters differ between repetitions": lambda b: b[1].update(extra=1.0),
    "counter order differs": lambda b: b.__setitem__(1, dict(reversed(list(b[1].items())))),
    "counter named time_s": lambda b: [e.update(time_s=5.0) for e in b[:3]],
    "complexity rows": lambda b: b.extend(
        [{"name": "x_BigO", "run_name": "x", "run_type": "aggregate", "aggregate_name": "BigO", "big_o": "N"}]
    ),
    "mixed time units": lambda b: b[1].update(time_unit="ns", real_time=1500.0),
    "default time unit": lambda b: [e.pop("time_unit") for e in b[:3]],
    "name without run_name": lambda b: [e.pop("run_name") for e in b[:3]],
    "negative zero": lambda b: [e.update(flops=-0.0) for e in b[:2]] + [b[2].update(flops=0.0)],
    "zero median": lambda b: [e.update(flops=0.0) for e in b[:3]],
    "interleaved cases": lambda b: b.insert(1, b.pop(8)),
    "aggregates only": lambda b: [b.pop(0) for _ in range(3)],
    "aggregates only, no median": lambda b: [b.pop(0) for _ in range(3)] + [b.pop(1)],
    "one repetition": lambda b: [b.pop(1), b.pop(1)],
    "unknown time_unit": lambda b: b[2].update(time_unit="parsecs"),
    "real_time not a number": lambda b: b[5].update(real_time="fast"),
    "real_time a bool": lambda b: b[1].update(real_time=True),
    "no real_time": lambda b: b[1].pop("real_time"),
    "no real_time, skipped": lambda b: [b[1].pop("real_time"), b[1].update(skipped=True)],
    "unknown run_type": lambda b: b[1].update(run_type="warmup"),
    "entry not an object": lambda b: b.insert(3, [1, 2]),
    "entry without a name": lambda b: [b[2].pop("run_name"), b[2].pop("name")],
    "run_type a list": lambda b: b[1].update(run_type=["iteration"]),
    "time_unit a list": lambda b: b[1].update(time_unit=["us"]),
    "repetition_index a list": lambda b: b[1].update(repetition_index=[1]),
    "aggregate_name a list": lambda b: b[4].update(aggregate_name=["median"]),
    "counter a list": lambda b: b[0].update(flops=[1.0]),
}


@pytest.mark.parametrize("branch", sorted(BRANCHES))
def test_every_branch_agrees_with_the_records(branch):
    _same(_variant(BRANCHES[branch]))


def test_a_skipped_case_does_not_slow_or_change_its_neighbours():
    context, notes, cases, cols = _same(_variant(BRANCHES["skipped (1.8+)"]))
    assert cols["status"].count("skipped") == 1 and cols["status"].count("ok") == len(cols["status"]) - 1


def _real_outputs():
    return sorted(p for p in SHARED.rglob("*.json") if p.name != "manifest.json")


def test_real_outputs_agree():
    n = 0
    for path in _real_outputs():
        try:
            data = read_json(path)
        except LoadError:
            continue
        _same(data, path)
        n += 1
    assert n >= 5


_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([0.0, -0.0, 1e-300, 5e-324]),
)
_values = st.one_of(_numbers, st.booleans(), st.none(), st.text(max_size=3), st.lists(st.integers(), max_size=1))


@st.composite
def _random_file(draw):
    names = draw(st.lists(st.sampled_from(["a/b/c", "a/b/d", "x/y/z:1", "x/y/z:2"]), min_size=1, max_size=4))
    entries = []
    for name in names:
        for rep in range(draw(st.integers(1, 4))):
            e = _it(name, draw(st.sampled_from([rep, rep, rep, 0, None, 1.0])), t=draw(_numbers))
            for k in draw(st.lists(st.sampled_from(["flops", "bytes_per_second", "joules_per_op", "n"]), max_size=3)):
                e[k] = draw(_values) if draw(st.booleans()) else draw(_numbers)
            if draw(st.integers(0, 9)) == 0:
                e.update(skipped=True, skip_message="skipped: synthetic")
            if e["repetition_index"] is None:
                e.pop("repetition_index")
            entries.append(e)
        for kind in draw(st.lists(st.sampled_from(["mean", "median", "stddev", "cv", "median"]), max_size=3)):
            entries.append(_agg(name, kind, t=draw(_numbers), flops=draw(_numbers)))
    if draw(st.booleans()):
        entries = draw(st.permutations(entries))
    return {"context": {"synthetic": "true"}, "benchmarks": entries}


@settings(max_examples=300, deadline=None)
@given(_random_file())
def test_random_files_agree(data):
    _same(data)
