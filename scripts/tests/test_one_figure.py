"""One run, one set of headline figures: the report's summary, `plan --run`, `floors derive`, the gate
and `triaudit figures` all quote the figures the one selector (results/figures.py) picks, on a
synthetic whole-node run (made-up numbers, not measurements) with several STREAM, GEMM and
allreduce cases, each set so that any other rule would pick another case: a cold copy and a hot
triad faster than the cold triad, a smaller triad, an FP64 triad; a cuBLASLt BF16 GEMM faster than
the BF16 ceiling; a Ring allreduce and a BF16 allreduce faster than NCCL's own choice in FP32, and
a smaller message."""

from __future__ import annotations

import json
import random

import pytest
import synthetic
import synthetic_gate as G

from triaudit import commands as cli
from triaudit.judge import derive as D
from triaudit.judge import floors as FL
from triaudit.judge.gate import gate
from triaudit.plan import questions as Q
from triaudit.report.sections.summary.headline import headlines
from triaudit.results import runs as R
from triaudit.results.figures import headline_figures
from triaudit.results.table import ResultSet, load_results

# (case, counter, value) beside the healthy figures of synthetic_gate, each a trap for another rule.
DECOYS = {
    "triaudit_stream": [
        ("stream/copy/fp32/cache:cold/bytes:1073741824", "bytes_per_second", 3.3e12),  # faster, not a triad
        ("stream/triad/fp32/cache:hot/bytes:4194304", "bytes_per_second", 9.0e12),  # from L2
        ("stream/triad/fp32/cache:cold/bytes:268435456", "bytes_per_second", 3.2e12),  # a smaller array
        ("stream/triad/fp64/cache:cold/bytes:1073741824", "bytes_per_second", 3.1e12),  # another type
    ],
    "triaudit_gemm": [
        ("gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192", "flops", 8.6e14),  # faster than the ceiling
        ("gemm/cublaslt/bf16/layout:nn/m:16384/n:16384/k:16384", "flops", 8.8e14),
    ],
}
ALLREDUCE_DECOYS = [
    ("allreduce/out_of_place/fp32/algo:ring/bytes:2147483648", "busbw", 3.9e11),
    ("allreduce/out_of_place/bf16/algo:auto/bytes:2147483648", "busbw", 4.0e11),
    ("allreduce/out_of_place/fp32/algo:auto/bytes:67108864", "busbw", 3.0e11),
    ("allreduce/in_place/fp32/algo:auto/bytes:2147483648", "busbw", 3.7e11),
]
KEYS = {"triad": "hbm", "bf16/burst": "gemm_bf16", "allreduce": "allreduce"}


def _add(path, extra, ranks=None):
    data = json.loads(path.read_text())
    rng = random.Random(path.name)
    for case, counter, value in extra:
        for r in range(5):
            v = value * (1 + rng.gauss(0, 0.003))
            counters = {counter: v, **({"ranks": float(ranks)} if ranks else {})}
            data["benchmarks"].append(synthetic._entry(case, 1e9 / v, r, 5, **counters))
    path.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    run = G.node_run(root, gpus=2, seed=3)
    for i in range(2):
        for exe, extra in DECOYS.items():
            _add(run / f"{exe}.gpu{i}.synthetic.json", extra)
    _add(run / "triaudit_allreduce.node.synthetic.json", ALLREDUCE_DECOYS, ranks=2)
    return root, run


def _figures(root, capsys) -> dict[tuple[str, str], dict]:
    assert cli.main(["figures", str(root), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return {(f["card"], f["key"]): f for f in out["figures"]}


def test_summary_plan_gate_floors_and_figures_quote_the_same_figures(node, tmp_path, capsys):
    root, run = node
    figs = _figures(root, capsys)
    gpu0 = next(c for c, k in figs if c.endswith("GPU 0"))
    gpu1 = next(c for c, k in figs if c.endswith("GPU 1"))

    # The selector's own picks: the cold FP32 triad at the largest array, the ceiling (not the
    # faster cuBLASLt GEMM), NCCL's own choice in FP32 out of place at the largest message.
    assert figs[(gpu0, "triad")]["case"] == "stream/triad/fp32/cache:cold/bytes:1073741824"
    assert figs[(gpu0, "bf16/burst")]["case"] == "gemm/ceiling/bf16/burst"
    assert figs[(gpu0, "allreduce")]["case"] == "allreduce/out_of_place/fp32/algo:auto/bytes:2147483648"
    assert figs[(gpu0, "allreduce")]["gpus"] == 2

    # The report's summary, built as the report builds it (newest run, a column per GPU).
    loaded = load_results([root])
    df, shown, _ = R.select(loaded.table, loaded.runs, loaded.contexts)
    h = headlines(ResultSet(df, loaded.contexts, loaded.runs, loaded.notes, shown))
    for card in (gpu0, gpu1):
        for key in ("triad", "bf16/burst"):
            assert h.value(key, card).median == figs[(card, key)]["value"], (card, key)
    assert h.value("allreduce", gpu0).median == figs[(gpu0, "allreduce")]["value"]

    # plan --run, on GPU 0's files and the node's allreduce: the same figures, their cases named.
    gpu0_files = sorted(run.glob("*.gpu0.synthetic.json")) + [run / "triaudit_allreduce.node.synthetic.json"]
    b = Q.basis_from_run(gpu0_files)
    assert b.mem_bw.value == figs[(gpu0, "triad")]["value"] and "cache:cold/bytes:1073741824" in b.mem_bw.source
    assert b.flops["bf16"].value == figs[(gpu0, "bf16/burst")]["value"]
    assert b.sync_busbw.value == figs[(gpu0, "allreduce")]["value"] and b.sync_gpus == 2
    args = ["plan", *[x for f in gpu0_files for x in ("--run", str(f))], "roofline", "--json"]
    assert cli.main(args) == 0
    rows = {r[0]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    bw_row = next(r for label, r in rows.items() if label.startswith("memory bandwidth"))
    assert bw_row[1] * 1e9 == pytest.approx(figs[(gpu0, "triad")]["value"], rel=1e-12)

    # floors derive: each floor holds the case the selector picked, at the median over the GPUs.
    skus, _ = D.derive([root])
    floors = {d.key: d for d in skus[0].floors}
    for key, check in KEYS.items():
        assert floors[check].case == figs[(gpu0, key)]["case"], check
    for key in ("triad", "bf16/burst"):
        both = sorted(figs[(c, key)]["value"] for c in (gpu0, gpu1))
        assert floors[KEYS[key]].median == pytest.approx(sum(both) / 2, rel=1e-12)
    out = tmp_path / "floors.toml"
    assert cli.main(["floors", "derive", str(root), "--out", str(out), "--fleet", "synthetic"]) == 0
    capsys.readouterr()

    # The gate against those floors: each verdict's measured figure is the selector's.
    result = gate([root], [out])
    measured = {(v.gpu, v.check): v.measured for v in result.verdicts}
    for i, card in ((0, gpu0), (1, gpu1)):
        for key in ("triad", "bf16/burst"):
            assert measured[(str(i), KEYS[key])] == figs[(card, key)]["value"], (i, key)
    assert measured[("", "allreduce")] == figs[(gpu0, "allreduce")]["value"]
    assert FL.FloorSet.load([out]) is not None


def test_the_energy_section_takes_the_selectors_burst_and_sustained(node):
    from triaudit.report import frames as F

    root, _ = node
    loaded = load_results([root])
    bs = F.burst_sustained_frame(loaded.table, loaded.contexts)
    picks = headline_figures(loaded.table, loaded.contexts, keys={"triad", "bf16/burst"})
    for r in picks.to_dict("records"):
        hit = bs[(bs["card"] == r["card"]) & (bs["case"] == r["case"])]
        assert len(hit) == 1 and hit["median"].iloc[0] == r["median"]
    assert set(bs["mode"]) == {"burst"}  # the fixture has no sustained case


def test_figures_command_refuses_nothing_and_says_none(tmp_path, capsys):
    assert cli.main(["figures", str(tmp_path / "nope")]) == 2
    assert "nope" in capsys.readouterr().err
    synthetic.write(
        tmp_path / "only_synthetic.json",
        {"context": synthetic.synthetic_context("NVIDIA H200"), "benchmarks": [synthetic._entry("x/y/z", 1e-3, 0, 1)]},
    )
    assert cli.main(["figures", str(tmp_path)]) == 3
    assert "no headline figure" in capsys.readouterr().out
