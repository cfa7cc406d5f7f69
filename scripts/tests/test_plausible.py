"""Figures no card can produce are errors in every reader, never measurements (results/plausible.py)."""

from __future__ import annotations

import pytest
from synthetic import _entry, synthetic_context, synthetic_stream_result, write

from triaudit import commands as cli
from triaudit.results.table import load_table


def _result(card: str, entries: list[dict]) -> dict:
    return {"context": synthetic_context(card), "benchmarks": entries}


def _reps(name: str, seconds: float, reps: int = 3, **counters) -> list[dict]:
    return [_entry(name, seconds, r, reps, **counters) for r in range(reps)]


def _status(df, case: str) -> tuple[str, str]:
    rows = df[df["case"].astype(str) == case]
    assert len(rows) >= 1, case
    return str(rows["status"].iloc[0]), str(rows["message"].iloc[0])


@pytest.fixture
def odd_run(tmp_path):
    entries = [
        *_reps("gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192", 1e-3, flops=1e308),
        *_reps("gemm/cublaslt/bf16/layout:tn/m:4096/n:4096/k:4096", 2e-4, flops=7.0e14),
        *_reps("stream/triad/fp32/cache:cold/bytes:1073741824", 1e-3, bytes_per_second=-155.0),
        *_reps("stream/copy/fp32/cache:cold/bytes:1073741824", 1e-3, bytes_per_second=4.1e12),
        *_reps("allreduce/out_of_place/fp32/algo:ring/bytes:1048576", 1e-5, algbw=1e11, busbw=0.0, ranks=1.0),
        *_reps("allreduce/out_of_place/fp32/algo:ring/bytes:2097152", 1e-5, algbw=0.0, busbw=0.0, ranks=1.0),
        *_reps("launch/sync/stream_synchronize", 0.0),
    ]
    return write(tmp_path / "r" / "synthetic_odd.json", _result("NVIDIA H200", entries))


def test_implausible_figures_become_errors_naming_the_figure_and_the_limit(odd_run):
    df = load_table([odd_run])
    status, why = _status(df, "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192")
    assert status == "error" and "flops is 1e+308" in why and "10x its datasheet bf16 peak (989.4 TFLOP/s)" in why
    status, why = _status(df, "stream/triad/fp32/cache:cold/bytes:1073741824")
    assert status == "error" and "bytes_per_second is -155" in why and "zero or less" in why
    status, why = _status(df, "allreduce/out_of_place/fp32/algo:ring/bytes:2097152")
    assert status == "error" and "algbw is 0" in why
    status, why = _status(df, "launch/sync/stream_synchronize")
    assert status == "error" and "time_s is 0" in why
    # One error row per case: no number is left beside it.
    bad = df[df["case"].astype(str) == "stream/triad/fp32/cache:cold/bytes:1073741824"]
    assert len(bad) == 1 and bad["median"].isna().all()


def test_good_figures_and_one_rank_busbw_stay_measurements(odd_run):
    df = load_table([odd_run])
    for case in (
        "gemm/cublaslt/bf16/layout:tn/m:4096/n:4096/k:4096",
        "stream/copy/fp32/cache:cold/bytes:1073741824",
        "allreduce/out_of_place/fp32/algo:ring/bytes:1048576",  # busbw 0 is one rank's formula
    ):
        assert _status(df, case)[0] == "ok", case


def test_an_unknown_card_is_held_to_the_sign_rule_only(tmp_path):
    entries = [
        *_reps("gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192", 1e-3, flops=1e17),
        *_reps("stream/triad/fp32/cache:cold/bytes:1073741824", 1e-3, bytes_per_second=-1.0),
    ]
    f = write(tmp_path / "r" / "synthetic_unknown.json", _result("Some Future GPU", entries))
    df = load_table([f])
    assert _status(df, "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192")[0] == "ok"
    assert _status(df, "stream/triad/fp32/cache:cold/bytes:1073741824")[0] == "error"


def test_plan_run_takes_no_negative_bandwidth(tmp_path, capsys):
    """plan --run turned -154.9 GB/s into 73,414 token/s: the case is an error now, and a run with
    nothing else measured is refused naming why."""
    data = synthetic_stream_result("NVIDIA H200", hbm_gbps=-154.9)
    run = write(tmp_path / "r" / "synthetic_negative_stream.json", data)
    assert cli.main(["plan", "--json", "--run", str(run), "decode", "--params", "7e9"]) == 2
    err = capsys.readouterr().err
    assert "hold no measured case" in err and "is -" in err and "not a measurement" in err


def _good_and_odd_runs(tmp_path):
    copy = _reps("stream/copy/fp32/cache:cold/bytes:1073741824", 5.1e-4, reps=5, bytes_per_second=4.2e12)
    good = [
        *copy,
        *_reps("gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192", 1.4e-3, reps=5, flops=7.8e14),
        *_reps("stream/triad/fp32/cache:cold/bytes:1073741824", 7.7e-4, reps=5, bytes_per_second=4.2e12),
    ]
    odd = [
        *copy,
        *_reps("gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192", 1.4e-3, reps=5, flops=1e308),
        *_reps("stream/triad/fp32/cache:cold/bytes:1073741824", 7.7e-4, reps=5, bytes_per_second=-155.0),
    ]
    a = write(tmp_path / "a" / "run1" / "synthetic_good.json", _result("NVIDIA H200", good)).parent
    b = write(tmp_path / "b" / "run2" / "synthetic_odd.json", _result("NVIDIA H200", odd)).parent
    return a, b


def test_compare_never_judges_an_impossible_figure(tmp_path):
    from triaudit.judge.compare import compare

    a, b = _good_and_odd_runs(tmp_path)
    t = compare(a, b).table.set_index("case")
    gemm = t.loc["gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192"]
    assert gemm["verdict"] == "newly failing" and "flops is 1e+308" in gemm["reason"]
    triad = t.loc["stream/triad/fp32/cache:cold/bytes:1073741824"]
    assert triad["verdict"] == "newly failing" and "zero or less" in triad["reason"]
    assert cli.main(["compare", str(a), str(b)]) == 1


def test_history_leaves_an_impossible_figure_out(tmp_path):
    a, b = _good_and_odd_runs(tmp_path)
    assert cli.main(["history", str(a), str(b), "--out", str(tmp_path / "hist")]) == 0
    text = (tmp_path / "hist" / "history.csv").read_text()
    assert "-155" not in text and "1e+308" not in text and "gemm/" not in text
    assert "stream/copy/fp32/cache:cold/bytes:1073741824" in text  # the case both runs measured
