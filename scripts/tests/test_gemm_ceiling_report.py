"""The GEMM section shows the ceiling burst and sustained apart (synthetic results, named so), and
does not fail when a run holds only ceiling or LLM cases (their names carry no m:/n:/k:)."""

import json

from triaudit.report import sections
from triaudit.results.table import load_results


def _run(tmp_path, cases):
    d = tmp_path / "nvidia-h200" / "20260101T000000Z-synthetic"
    d.mkdir(parents=True)
    bench = []
    for case, flops in cases.items():
        for r in range(5):
            bench.append(
                {
                    "name": case + "/manual_time",
                    "run_name": case + "/manual_time",
                    "run_type": "iteration",
                    "repetitions": 5,
                    "repetition_index": r,
                    "threads": 1,
                    "iterations": 1,
                    "real_time": 1.0,
                    "cpu_time": 1.0,
                    "time_unit": "us",
                    "flops": flops,
                }
            )
    (d / "synthetic_gemm.json").write_text(
        json.dumps(
            {"context": {"gpu_available": "true", "gpu_name": "NVIDIA H200", "synthetic": "true"}, "benchmarks": bench}
        )
    )
    return load_results([tmp_path])


def test_burst_and_sustained_are_separate_rows(tmp_path):
    df = _run(
        tmp_path,
        {
            "gemm/ceiling/bf16/burst": 800e12,
            "gemm/ceiling/bf16/sustained": 720e12,
            "gemm/cublaslt/bf16/llm:llama2-7b-qkv/tokens:1": 2e12,
        },
    )
    title, table = sections.gemm.gemm_section(df).tables[0]
    assert "burst" in title and "sustained" in title
    cells = {idx: row.iloc[0] for idx, row in table.iterrows()}
    assert cells[("bf16", "burst")].startswith("800 ±") and cells[("bf16", "sustained")].startswith("720 ±")


def test_the_whole_report_renders_a_run_of_only_ceiling_and_llm_cases(tmp_path):
    # The published-figures table looked for cuBLASLt at 8192^3 in an `m` column these names do not
    # make: KeyError 'm', a traceback from `triaudit report`.
    from triaudit import commands as cli

    _run(
        tmp_path / "results", {"gemm/ceiling/bf16/burst": 800e12, "gemm/cublaslt/bf16/llm:llama2-7b-qkv/tokens:1": 2e12}
    )
    out = tmp_path / "rep"
    assert cli.main(["report", str(tmp_path / "results"), "--out", str(out)]) == 0
    assert "| bf16 | burst | 800 ±" in (out / "report.md").read_text()
