"""The report's allreduce section on synthetic results (made-up numbers) in today's case names:
`allreduce/<mode>/<type>/algo:<ring|auto>/bytes:N`, and the GPU-count sweep
`allreduce/scaling/<type>/algo:<a>/gpus:<g>/bytes:N` that has its own section."""

from synthetic import _entry, synthetic_context, write

from triaudit.corners import corner_named
from triaudit.report.sections.collective import bandwidth_section
from triaudit.report.sections.energy import energy_section
from triaudit.results.table import load_results

BIG = 1 << 30


def bandwidth_section_of(rs):
    return bandwidth_section(rs, corner_named("allreduce"))


def _results(tmp_path):
    b = []
    for r in range(3):
        for algo, gbps in (("ring", 100.0), ("auto", 150.0)):
            for size in (8, BIG):
                t = size / (gbps * 1e9 / 1.75) + 20e-6 * (algo == "ring")
                b.append(
                    _entry(
                        f"allreduce/out_of_place/bf16/algo:{algo}/bytes:{size}",
                        t,
                        r,
                        3,
                        algbw=size / t,
                        busbw=size / t * 1.75,
                        ranks=8,
                        busbw_per_watt=(2e8 if algo == "ring" else 3e8),
                        watts_mean=4000.0,
                    )
                )
        for gpus in (2, 4, 8):  # the scaling sweep: a different question, its own section
            t = BIG / 50e9
            b.append(
                _entry(
                    f"allreduce/scaling/bf16/algo:ring/gpus:{gpus}/bytes:{BIG}",
                    t,
                    r,
                    3,
                    algbw=BIG / t,
                    busbw=BIG / t * 2 * (gpus - 1) / gpus,
                    ranks=gpus,
                    busbw_per_watt=9e9,
                )
            )
    run = tmp_path / "synthetic-h200" / "20260101T000000Z-synthetic"
    write(run / "triaudit_allreduce_synthetic.json", {"context": synthetic_context("NVIDIA H200"), "benchmarks": b})
    return load_results([run])


def test_each_algorithm_keeps_its_own_row(tmp_path):
    sec = bandwidth_section_of(_results(tmp_path))
    caption, table = next((c, t) for c, t in sec.tables if c.startswith("Largest message"))
    assert "algo" in table.index.names
    cells = {key[table.index.names.index("algo")]: v for key, v in table.iloc[:, 0].items()}
    assert set(cells) == {"ring", "auto"}
    ring, auto = (float(cells[a].split()[0]) for a in ("ring", "auto"))
    assert abs(ring - 100.0) < 3 and abs(auto - 150.0) < 3  # GB/s, not one algorithm's figure for both


def test_the_scaling_sweep_is_not_mixed_into_the_bandwidth_tables(tmp_path):
    sec = bandwidth_section_of(_results(tmp_path))
    for _, table in sec.tables:
        assert "scaling" not in set(table.index.get_level_values("op"))
    assert "scaling" not in set(sec.csv["op"])


def test_the_figure_draws_a_line_per_algorithm(tmp_path):
    sec = bandwidth_section_of(_results(tmp_path))
    ((_, _, fig),) = sec.figures
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert sorted(labels) == ["NVIDIA H200: out_of_place bf16 algo:auto", "NVIDIA H200: out_of_place bf16 algo:ring"]


def test_perf_per_watt_keeps_each_algorithm_and_leaves_out_the_scaling_sweep(tmp_path):
    sec = energy_section(_results(tmp_path))
    rows = {
        key[1]: row.iloc[0]
        for _, t in sec.tables
        for key, row in t.iterrows()
        if isinstance(key, tuple) and str(key[0]).startswith("allreduce busbw")
    }
    assert rows == {"out_of_place bf16 algo:auto": "0.300", "out_of_place bf16 algo:ring": "0.200"}
