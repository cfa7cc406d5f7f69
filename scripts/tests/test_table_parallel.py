"""Many files are read by several processes: the table must be the same as read one by one."""

import pandas as pd
from synthetic import synthetic_stream_result, write

from triaudit.results import reading, table


def test_parallel_and_sequential_reading_give_the_same_table(tmp_path, monkeypatch):
    for i in range(30):
        write(
            tmp_path / f"card-{i % 3}" / f"2026010{1 + i // 10}T000000Z-h{i}" / "synthetic_stream.json",
            synthetic_stream_result(f"Synthetic Card {i % 3}", hbm_gbps=1000 + i, sizes=(2**20,), reps=3),
        )
    monkeypatch.setattr(reading, "PARALLEL_FILES", 10)
    fast = table.load_results([tmp_path])
    monkeypatch.setattr(reading, "PARALLEL_FILES", 10**9)
    slow = table.load_results([tmp_path])
    pd.testing.assert_frame_equal(fast.table, slow.table)
    assert len(fast.contexts) == 30 and len(fast.runs) == 30 and fast.contexts == slow.contexts


def test_a_bad_file_among_many_is_named_when_read_in_parallel(tmp_path, monkeypatch, capsys):
    from triaudit import commands as cli

    for i in range(12):
        write(
            tmp_path / "r" / f"h{i}" / "synthetic_stream.json",
            synthetic_stream_result("Synthetic Card", 1000, sizes=(2**20,)),
        )
    bad = tmp_path / "r" / "h5" / "broken_synthetic.json"
    bad.write_text('{"benchmarks": [')
    monkeypatch.setattr(reading, "PARALLEL_FILES", 4)
    assert cli.main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep")]) == 2
    assert "broken_synthetic.json: not valid JSON" in capsys.readouterr().err


def test_columns_derived_from_case_names_keep_missing_values_missing():
    # A name argument only some cases have (m: in GEMM names, not in STREAM's) is missing for the
    # others: an early version wrapped the missing code onto the last value ("tn" for an allreduce).
    import pandas as pd

    from triaudit.results.table import _derived

    cases = pd.Series(pd.Categorical(["b", "a", "c", "a"]))
    assert list(pd.Series(_derived(cases.cat, [None, "x", "y"])).astype(object).fillna("-")) == ["x", "-", "y", "-"]


def test_reading_under_way_is_stopped_when_the_report_cannot_be_written(tmp_path, monkeypatch, capsys):
    import multiprocessing

    from triaudit import commands as cli

    for i in range(12):
        write(
            tmp_path / "r" / f"h{i}" / "synthetic_stream.json",
            synthetic_stream_result("Synthetic Card", 1000, sizes=(2**20,)),
        )
    (tmp_path / "out").write_text("a file where the report's folder would go")
    monkeypatch.setattr(reading, "PARALLEL_FILES", 4)
    assert cli.main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err
    assert multiprocessing.active_children() == []  # the reading processes are gone
