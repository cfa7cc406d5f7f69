"""compare as a CI gate: exit codes on every way a run can go wrong (issue 13 item 2), the algorithm
as part of a GEMM case's identity, new counter names judged by rule."""

import os
import subprocess
import sys
from pathlib import Path

from synthetic import _entry, synthetic_context, write

from triaudit import commands as cli
from triaudit.judge.compare import load_samples

GBENCH = Path(__file__).parent / "data" / "gbench"  # google/benchmark's own inputs (SOURCE.txt)


def _run(tmp_path, name, cases, reps=5, card="NVIDIA H200", extra=None):
    """cases: {case: (seconds, {counter: value})}; repetitions jitter by 0.1 %."""
    b = []
    for case, (seconds, counters) in cases.items():
        for r in range(reps):
            j = 1 + 0.001 * (r - reps // 2)
            b.append(
                _entry(
                    case,
                    seconds * j,
                    r,
                    reps,
                    **{
                        k: (
                            v / j
                            if k in ("flops", "busbw", "algbw", "bytes_per_second", "bytes_per_second_total")
                            else v
                        )
                        for k, v in counters.items()
                    },
                )
            )
    ctx = synthetic_context(card)
    ctx.update(extra or {})
    d = tmp_path / name
    write(d / "synthetic.json", {"context": ctx, "benchmarks": b})
    return d


GEMM = "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192"


def test_a_new_run_whose_every_case_errored_fails_and_names_them(tmp_path, capsys):
    base = _run(
        tmp_path,
        "base",
        {GEMM: (1e-3, {"flops": 1e15}), "stream/triad/fp32/cache:cold/bytes:1024": (1e-6, {"bytes_per_second": 3e12})},
    )
    bad = tmp_path / "new"
    write(
        bad / "synthetic.json",
        {
            "context": synthetic_context("NVIDIA H200"),
            "benchmarks": [
                {
                    **_entry(c, 1.0, 0, 1),
                    "error_occurred": True,
                    "error_message": "CUDA error: an illegal memory access",
                }
                for c in (GEMM, "stream/triad/fp32/cache:cold/bytes:1024")
            ],
        },
    )
    assert cli.main(["compare", str(base), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "### newly failing" in out and f"`{GEMM}`" in out and "illegal memory access" in out
    assert "Gate: **fail**: 2 newly failing (exit 1)" in out


def test_a_missing_case_fails_the_gate(tmp_path, capsys):
    base = _run(tmp_path, "base", {GEMM: (1e-3, {"flops": 1e15}), "launch/empty/enqueue/kernels:512": (2e-6, {})})
    new = _run(tmp_path, "new", {GEMM: (1e-3, {"flops": 1e15})})
    assert cli.main(["compare", str(base), str(new)]) == 1
    out = capsys.readouterr().out
    assert "### missing" in out and "`launch/empty/enqueue/kernels:512`" in out


def test_aggregates_only_files_are_untested_and_a_big_slowdown_fails(tmp_path, capsys):
    def agg(seconds, flops):
        return {
            "name": GEMM + "/manual_time_median",
            "run_name": GEMM + "/manual_time",
            "run_type": "aggregate",
            "repetitions": 5,
            "threads": 1,
            "aggregate_name": "median",
            "aggregate_unit": "time",
            "iterations": 5,
            "real_time": seconds * 1e6,
            "cpu_time": 1.0,
            "time_unit": "us",
            "flops": flops,
        }

    for name, flops in (("a", 1e15), ("b", 0.97e15), ("c", 0.5e15)):
        write(
            tmp_path / name / "agg_synthetic.json",
            {"context": synthetic_context("NVIDIA H200"), "benchmarks": [agg(2 * 8192**3 / flops, flops)]},
        )
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "1 untested" in out and "-3.0%" in out and "only aggregates" in out
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "c")]) == 1
    out = capsys.readouterr().out
    assert "### untested change" in out and "-50.0%" in out and "--max-untested-change 10%" in out
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "c"), "--max-untested-change", "0.6"]) == 0


def test_one_second_to_a_thousand_with_one_repetition_fails_without_nan(capsys):
    # google/benchmark's own test5 inputs: BM_ManyRepetitions, real_time 1 s then 1000 s, once each.
    assert cli.main(["compare", str(GBENCH / "test5_run0.json"), str(GBENCH / "test5_run1.json")]) == 1
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    assert "| `BM_ManyRepetitions` | time_s | 1.00 s | 1,000 s | +99900.0% |" in out  # with units (core/numbers.py)
    assert "− is faster" in out and "+ is faster" in out


def test_real_files_with_complexity_rows_compare(capsys):
    # test1_run1/run2 end with BigO/RMS rows; BM_2xSlower goes 50 -> 100 ns in one repetition.
    assert cli.main(["compare", str(GBENCH / "test1_run1.json"), str(GBENCH / "test1_run2.json")]) == 1
    out = capsys.readouterr().out
    assert "test1_run1.json: 2 complexity (BigO/RMS) row(s) skipped" in out
    line = next(x for x in out.splitlines() if x.startswith("| `BM_2xSlower`"))
    assert "+100.0%" in line and "slower by more than" in line
    assert "| `BM_2xFaster` | time_s | 50.0 ns | 25.0 ns | -50.0% |" in out  # with its unit; time: - is faster


def test_aggregates_without_a_median_and_no_common_measured_case_is_exit_3(capsys):
    # test4_run0/run1: one aggregate named "zz" each and nothing else: nothing to judge.
    assert cli.main(["compare", str(GBENCH / "test4_run0.json"), str(GBENCH / "test4_run1.json")]) == 3
    assert "nothing judged" in capsys.readouterr().out


def test_runs_with_no_case_in_common_are_exit_3(tmp_path, capsys):
    a = _run(tmp_path, "a", {GEMM: (1e-3, {"flops": 1e15})})
    b = _run(tmp_path, "b", {"stream/copy/fp32/cache:hot/bytes:1024": (1e-6, {"bytes_per_second": 2e12})})
    assert cli.main(["compare", str(a), str(b)]) == 3


def test_a_changed_algorithm_is_flagged_not_judged(tmp_path, capsys):
    base = _run(tmp_path, "base", {GEMM: (1e-3, {"flops": 1.0e15, "algo_id": 23.0})})
    new = _run(tmp_path, "new", {GEMM: (1e-3, {"flops": 1.0e15, "algo_id": 31.0})})
    assert cli.main(["compare", str(base), str(new)]) == 1
    out = capsys.readouterr().out
    assert "### algorithm changed" in out and "algo_id 23 → 31" in out and "1 algorithm changed" in out
    assert "0 same" in out
    # Asked to, the gate judges it like the others (and still says the algorithm changed).
    assert cli.main(["compare", str(base), str(new), "--allow-algo-change"]) == 0
    out = capsys.readouterr().out
    assert "1 same" in out


def test_the_same_algorithm_is_judged_as_usual(tmp_path, capsys):
    base = _run(tmp_path, "base", {GEMM: (1e-3, {"flops": 1.0e15, "algo_id": 23.0})})
    new = _run(tmp_path, "new", {GEMM: (1.1e-3, {"flops": 0.9e15, "algo_id": 23.0})})
    assert cli.main(["compare", str(base), str(new)]) == 1
    assert "### slower" in capsys.readouterr().out


def test_new_counter_names_are_judged_by_rule(tmp_path):
    energy = {"joules_per_op": 0.5, "watts_mean": 600.0}
    cases = {
        "gemm/cublaslt/bf16/llm:llama3-70b-mlp_up/tokens:16/layout:tn": (
            1e-4,
            {"flops": 2e14, "algo_id": 7.0, "flops_per_joule": 1e12, **energy},
        ),
        "gemm/ceiling/bf16/burst": (1e-3, {"flops": 8e14, **energy}),
        "gemm/ceiling/bf16/sustained": (1e-3, {"flops": 7.4e14, **energy}),
        "allreduce/out_of_place/bf16/algo:ring/bytes:1073741824": (
            3e-3,
            {"busbw": 4.2e11, "algbw": 2.4e11, "busbw_max_rank": 4.3e11, "ranks": 8.0},
        ),
        "allreduce/out_of_place/bf16/algo:auto/bytes:8": (2e-5, {"busbw": 0.0, "algbw": 4e5, "ranks": 1.0}),
        "memcpy/bidir/pinned/bytes:1073741824": (
            2e-2,
            {"bytes_per_second": 5.3e10, "bytes_per_second_total": 1.06e11, "bytes_per_joule": 1e8, **energy},
        ),
        "launch/chain/graph/kernels:100": (6e-5, {"per_kernel_s": 6e-7}),
    }
    run = load_samples(_run(tmp_path, "r", cases))
    judged = {c: run.cases[c].metric for c in cases}
    assert judged == {
        "gemm/cublaslt/bf16/llm:llama3-70b-mlp_up/tokens:16/layout:tn": "flops",
        "gemm/ceiling/bf16/burst": "flops",
        "gemm/ceiling/bf16/sustained": "flops",
        "allreduce/out_of_place/bf16/algo:ring/bytes:1073741824": "busbw",
        "allreduce/out_of_place/bf16/algo:auto/bytes:8": "algbw",  # one rank: busbw is 0 by definition
        "memcpy/bidir/pinned/bytes:1073741824": "bytes_per_second",  # per direction, not the total
        "launch/chain/graph/kernels:100": "per_kernel_s",
    }
    assert run.cases["gemm/cublaslt/bf16/llm:llama3-70b-mlp_up/tokens:16/layout:tn"].algo == (7.0,)


def test_output_into_a_closed_pipe_is_no_traceback(tmp_path):
    base = _run(
        tmp_path,
        "base",
        {f"stream/copy/fp32/cache:hot/bytes:{1 << i}": (1e-6, {"bytes_per_second": 2e12}) for i in range(10, 30)},
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1]))
    p = subprocess.run(
        f"{sys.executable} -m triaudit compare {base} {base} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.stdout.startswith("## triaudit compare") and "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr


def test_history_refuses_a_bad_regex_and_runs_of_different_cards(tmp_path, capsys):
    a = _run(tmp_path, "20260101T000000Z-a", {GEMM: (1e-3, {"flops": 1e15})})
    b = _run(tmp_path, "20260102T000000Z-b", {GEMM: (1e-3, {"flops": 1e15})})
    assert cli.main(["history", str(a), str(b), "--cases", "gemm/(", "--out", str(tmp_path / "h")]) == 2
    assert "--cases 'gemm/(': not a valid regular expression" in capsys.readouterr().err
    c = _run(tmp_path, "20260103T000000Z-c", {GEMM: (1e-3, {"flops": 1e15})}, card="NVIDIA H100 80GB HBM3")
    assert cli.main(["history", str(a), str(b), str(c), "--out", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err
    assert "history follows one card" in err and "NVIDIA H100 80GB HBM3: 20260103T000000Z-c" in err
    (tmp_path / "file").write_text("x")
    assert cli.main(["history", str(a), str(b), "--out", str(tmp_path / "file")]) == 2


def test_a_folder_of_several_runs_is_refused(tmp_path, capsys):
    _run(tmp_path / "card", "20260101T000000Z-a", {GEMM: (1e-3, {"flops": 1e15})})
    _run(tmp_path / "card", "20260102T000000Z-b", {GEMM: (1e-3, {"flops": 1e15})})
    assert cli.main(["compare", str(tmp_path / "card"), str(tmp_path / "card" / "20260102T000000Z-b")]) == 2
    assert "holds 2 runs" in capsys.readouterr().err


def test_a_case_in_two_files_of_the_new_run_is_a_conflict_not_a_number(tmp_path, capsys):
    base = _run(tmp_path, "base", {GEMM: (1e-3, {"flops": 1e15})})
    new = _run(tmp_path, "new", {GEMM: (1e-3, {"flops": 1e15})})
    write(
        new / "second_synthetic.json",
        {
            "context": synthetic_context("NVIDIA H200"),
            "benchmarks": [_entry(GEMM, 1e-2, r, 5, flops=1e14) for r in range(5)],
        },
    )
    assert cli.main(["compare", str(base), str(new)]) == 1
    out = capsys.readouterr().out
    assert "### newly failing" in out and "conflict" in out and "second_synthetic.json" in out
