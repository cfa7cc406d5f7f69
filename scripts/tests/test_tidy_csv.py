"""tidy_csv writes what DataFrame.to_csv writes, byte for byte, on tables made from synthetic result
files (made-up numbers in the executables' shape) with the awkward parts: skipped and failed cases,
messages with commas, quotes and line breaks, missing name arguments, duplicated cases."""

import math

import pandas as pd
from synthetic import synthetic_corners_result, synthetic_stream_result, write

from triaudit.report import tidy_csv
from triaudit.report.page import _frame, write_report
from triaudit.results.table import ROW_COLUMNS, load_table


def _pandas(df, path, columns):
    df.to_csv(path, index=False, columns=columns)
    return path.read_bytes()


def _fast(df, path, columns):
    tidy_csv.write(df, path, columns, ROW_COLUMNS)
    return path.read_bytes()


def _awkward_results(tmp_path):
    run = tmp_path / "results" / "synthetic-a" / "20260101T000000Z-synthetic"
    a = synthetic_corners_result("Synthetic Card A")
    a["benchmarks"].append(
        {
            "name": "stream/copy/fp32/cache:cold/bytes:4096/manual_time",
            "run_type": "iteration",
            "repetition_index": 0,
            "iterations": 0,
            "real_time": 0,
            "time_unit": "ns",
            "error_occurred": True,
            "error_message": 'verification failed: 3 wrong, first at [7], "got" 1.5, want 2\nsee log',
        }
    )
    a["benchmarks"].append(dict(a["benchmarks"][0]))  # a duplicated case: a conflict, not a repetition
    write(run / "triaudit_corners_synthetic.json", a)
    write(run / "triaudit_stream_synthetic.json", synthetic_stream_result("Synthetic Card A", 3000.0))
    other = tmp_path / "results" / "synthetic-b" / "20260102T000000Z-synthetic"
    write(other / "triaudit_corners_synthetic.json", synthetic_corners_result("Synthetic Card B", scale=0.8))
    return tmp_path / "results"


def test_same_bytes_as_pandas_on_the_tidy_table(tmp_path):
    df = load_table([_awkward_results(tmp_path)])
    assert (df["status"] == "error").sum() >= 2 and df["message"].str.contains("\n").any()
    assert df[list(c for c in df.columns if c not in ROW_COLUMNS)].isna().any().any()  # missing arguments
    columns = [c for c in df.columns if c not in ("file", "run_dir")]
    assert _fast(df, tmp_path / "fast.csv", columns) == _pandas(df, tmp_path / "pandas.csv", columns)


def test_same_bytes_after_the_report_relabels_columns(tmp_path):
    df = _frame([_awkward_results(tmp_path)])[0].table  # select(): card relabelled, card_name added
    columns = [c for c in df.columns if c not in ("file", "run_dir")]
    assert "card_name" in columns
    assert _fast(df, tmp_path / "fast.csv", columns) == _pandas(df, tmp_path / "pandas.csv", columns)


def test_a_per_case_column_that_varies_within_a_case_is_still_written_right(tmp_path):
    df = load_table([_awkward_results(tmp_path)])
    df["op"] = [f"op{i}" for i in range(len(df))]  # breaks the assumption: every row its own value
    columns = [c for c in df.columns if c not in ("file", "run_dir")]
    assert tidy_csv._group_starts(df, [c for c in columns if c not in ROW_COLUMNS]) is None
    assert _fast(df, tmp_path / "fast.csv", columns) == _pandas(df, tmp_path / "pandas.csv", columns)


def test_values_pandas_writes_in_its_own_way(tmp_path):
    df = pd.DataFrame(
        {
            "file": ["f", "f", "f", "g"],
            "case": ["c", "c", "d", "c"],
            "card": ["x, y", "x, y", 'q"uote', None],
            "metric": ["a", "b", "a", "a"],
            "median": [1e-05, 123456789012345678.0, math.nan, 0.1 + 0.2],
            "reps": [5, 5, 0, 3],
            "complete": [True, True, False, True],
            "status": ["ok", "ok", "error", "ok"],
            "message": ["", "", "line one\r\nline two", ""],
        }
    )
    columns = ["card", "case", "metric", "median", "reps", "status", "message", "complete"]
    assert _fast(df, tmp_path / "fast.csv", columns) == _pandas(df, tmp_path / "pandas.csv", columns)


def test_row_columns_that_are_one_per_case_are_written_once_per_case(tmp_path):
    # reps, status and message vary within a case only when a counter missed repetitions or rows
    # were fixed up: where they do not, they are formatted once per case; where they do, per row.
    df = pd.DataFrame(
        {
            "file": ["f", "f", "f", "g", "g"],
            "case": ["c", "c", "d", "c", "c"],
            "card": ["x", "x", "x", "y", "y"],
            "metric": pd.Categorical(["a", "b", "a", "a", "b"]),
            "median": [1.0, -0.0, 0.0, 2.5, 3.5],
            "reps": [5, 5, 1, 5, 3],
            "status": pd.Categorical(["ok", "ok", "error", "ok", "ok"]),
            "message": pd.Categorical(["", "", "a, b", "", ""]),
            "complete": [True, True, True, False, False],
        }
    )
    boundary = tidy_csv._boundary(df)
    assert tidy_csv._steady(df, ["metric", "median", "reps", "status", "message"], boundary) == {"status", "message"}
    columns = ["card", "case", "metric", "median", "reps", "status", "message", "complete"]
    assert _fast(df, tmp_path / "fast.csv", columns) == _pandas(df, tmp_path / "pandas.csv", columns)
    df["reps"] = [5, 5, 1, 3, 3]
    assert tidy_csv._steady(df, ["reps"], boundary) == {"reps"}
    assert _fast(df, tmp_path / "fast.csv", columns) == _pandas(df, tmp_path / "pandas.csv", columns)


def test_the_report_writes_tidy_csv_with_it(tmp_path):
    res = _awkward_results(tmp_path)
    write_report([res], tmp_path / "report")
    df = _frame([res])[0].table
    columns = [c for c in df.columns if c not in ("file", "run_dir")]
    assert (tmp_path / "report" / "tidy.csv").read_bytes() == _pandas(df, tmp_path / "pandas.csv", columns)


def _bit_patterns(n, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**64, size=n, dtype=np.uint64).view(np.float64)  # every exponent, both signs
    decimal = np.round(rng.random(n) * 1000, 3) * 10.0 ** rng.integers(-30, 30, n)  # "round" numbers
    edges = [0.0, -0.0, 1e-4, -1e-4, 9.999999999999999e-05, 1e-05, 1e-07, 1e16, 1e15, 9999999999999998.0,
             5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, math.inf, -math.inf, math.nan]  # fmt: skip
    return np.concatenate([a, decimal, 10.0 ** np.arange(-320, 309), np.array(edges)])


def test_float_texts_are_repr_for_every_kind_of_double():
    values = _bit_patterns(500_000, seed=13)
    expected = [repr(x) if x == x else "" for x in values.tolist()]
    assert tidy_csv.float_texts(values) == expected


def test_float_texts_without_orjson(monkeypatch):
    values = _bit_patterns(1000, seed=14)
    fast = tidy_csv.float_texts(values)
    monkeypatch.setattr(tidy_csv, "_orjson", None)
    assert tidy_csv.float_texts(values) == fast


def test_the_corner_csvs_are_what_pandas_writes(tmp_path):
    from triaudit.report import sections

    rs, _ = _frame([_awkward_results(tmp_path)])
    tables = [s.csv for s in sections.all_sections(rs) if s.csv is not None and not s.csv.empty]
    assert len(tables) >= 4
    for i, t in enumerate(tables):
        tidy_csv.write_table(t, tmp_path / f"fast{i}.csv")
        t.to_csv(tmp_path / f"pandas{i}.csv", index=False)
        assert (tmp_path / f"fast{i}.csv").read_bytes() == (tmp_path / f"pandas{i}.csv").read_bytes()
    awkward = pd.DataFrame(
        {"a,b": ["x", None, 'q"uote', "line\nbreak"], "n": [1, 2, 3, 4], "f": [0.1, math.nan, 1e-05, -0.0]}
    )
    awkward["c"] = pd.Categorical(["u", "v", None, "u"])
    awkward["flag"] = [True, False, True, False]
    tidy_csv.write_table(awkward, tmp_path / "fast.csv")
    awkward.to_csv(tmp_path / "pandas.csv", index=False)
    assert (tmp_path / "fast.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()
