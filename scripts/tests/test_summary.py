"""The report's summary (report/sections/summary/): headline figures per card, the triangle, the
binding corner of named workloads and the pair sentences, on synthetic sets of one, two and five
cards (tests/synthetic_cards.py: model-based results, NOT measurements) and on a set where one
card lacks a corner."""

from __future__ import annotations

import re

import pytest
from conftest import _build_dir
from synthetic_cards import DEVICE_NAME, catalogue, write_cards

from triaudit import commands as cli
from triaudit.plan.models import MODELS
from triaudit.report.sections.summary import pairs, triangle, workloads
from triaudit.report.sections.summary.headline import headlines
from triaudit.report.sections.summary.section import summary_section
from triaudit.results.table import load_results

H200, A100 = DEVICE_NAME["h200"], DEVICE_NAME["a100-sxm-80"]
H200_NAME = H200
FIVE = ["h200", "h100-sxm", "a100-sxm-80", "l40s", "rtx-4090"]


@pytest.fixture(scope="module")
def names():
    build = _build_dir()
    if not (build / "benchmarks" / "stream" / "triaudit_stream").exists():
        pytest.skip(f"{build} not built (scripts/test.sh builds it first)")
    return catalogue(build)


@pytest.fixture(scope="module")
def two(names, tmp_path_factory):
    root = tmp_path_factory.mktemp("two")
    write_cards(root, ["h200", "a100-sxm-80"], names, p2p_gpus=4)
    return load_results([root])


def test_synthetic_headlines_are_the_corner_sections_figures(two):
    h = headlines(two)
    assert h.cards == [A100, H200]
    t = h.table()
    row = lambda label: t.xs(label, level="figure")  # noqa: E731
    assert row("BF16 dense GEMM, burst (TFLOP/s)")[H200].iloc[0].startswith("828 ±")
    assert row("BF16 dense GEMM, burst (TFLOP/s)")[H200].iloc[0].endswith("(84%)")
    # A card without a figure says why: the A100's FP8 ceiling was skipped.
    assert (
        row("FP8 (E4M3) dense GEMM, burst (TFLOP/s)")[A100].iloc[0]
        == "skipped: FP8 needs compute capability 8.9 or newer"
    )
    assert row("memory: STREAM triad, largest array, L2 flushed (TB/s)")[H200].iloc[0].startswith("4.21 ±")
    ar = row("NCCL allreduce busbw, largest message (GB/s)")[H200].iloc[0]
    assert ar.endswith("(8 GPUs, 8 GiB)")
    # The slow synthetic pair GPU0 -> GPU1 is the slowest of its link type, at 60 % of the others.
    slow = h.value("p2p/NV18/slowest", H200)
    fast = h.value("p2p/NV18/fastest", H200)
    assert slow.extra == "GPU0→GPU1" and slow.median / fast.median == pytest.approx(0.6, rel=0.01)
    assert h.why("p2p/NV18/slowest", A100) == "no NV18 link"
    # The measured ridge point is BF16 burst over the triad; the datasheet's is peak over peak.
    ridge = h.value("ridge", H200).median
    assert ridge == pytest.approx(h.value("bf16/burst", H200).median / h.value("triad", H200).median)
    assert h.value("ridge/datasheet", H200).median == pytest.approx(989.4e12 / 4.8e12, rel=0.01)
    # Energy per FLOP from the case's own mean power.
    e = h.value("energy/bf16/burst", H200)
    assert e.median == pytest.approx(h.value("bf16/burst", H200).watts / h.value("bf16/burst", H200).median)
    assert not any(c == "" for c in t.to_numpy().ravel())


def test_synthetic_pair_sentence_states_each_ratio(two):
    h = headlines(two)
    (s,) = pairs.sentences(h)
    r = {k: h.value(k, H200).median / h.value(k, A100).median for k in ("bf16/burst", "triad", "h2d")}
    assert s.startswith(f"{H200} over {A100}: ")
    assert f"{r['bf16/burst']:.2f}× compute (BF16 GEMM burst)" in s
    assert f"{r['triad']:.2f}× bandwidth (memory triad)" in s
    assert f"{r['h2d']:.2f}× movement (pinned host → device)" in s
    assert "Not compared" not in s


def test_synthetic_binding_corner_follows_the_roofline(two):
    answers = workloads.binding(headlines(two))
    one = answers["Llama-3-70B decode, batch 1"][H200]
    assert one.startswith("≈ ") and "token/s per GPU, bandwidth-bound" in one
    tokens = float(re.search(r"≈ ([\d,.]+) token/s per GPU", one).group(1).replace(",", ""))
    # Batch 1 reads every FP8 weight once per token (plus one sequence's cache).
    bw = headlines(two).value("triad", H200).median
    assert tokens == pytest.approx(bw / MODELS["llama-3-70b"].params(), rel=0.1)
    full = answers["Llama-3-70B decode, the batch that fills memory"][H200]
    batch = int(re.match(r"batch ([\d,]+):", full).group(1).replace(",", ""))
    assert batch > 1 and "token/s per GPU" in full
    assert answers["Llama-3-70B prefill"][H200].startswith("compute-bound")
    # The prefill's ridge is named by its precision (FP8), not left to be read as the summary's BF16 one.
    assert "against the fp8e4m3 ridge of" in answers["Llama-3-70B prefill"][H200]
    assert "fp8e4m3 ceiling" in answers["Llama-3-70B prefill"][H200]
    assert "no FP8 compute: bf16 used" in answers["Llama-3-70B decode, batch 1"][A100]
    train = answers["Llama-3-8B training step"][H200]
    assert train.startswith("compute-bound: GEMM ≈ ") and "on 8 GPUs" in train


def _panels(fig) -> dict[str, set[str]]:
    """Each drawn panel's title -> the cards whose artists it holds (core/palette.py gids)."""
    from triaudit.core.palette import card_of_gid

    return {
        ax.get_title(): {card_of_gid(a.get_gid()) for a in ax.get_children() if card_of_gid(a.get_gid())}
        for ax in fig.axes
        if ax.get_title()
    }


def test_synthetic_triangle_small_multiples_one_card_per_panel_in_its_colour(two):
    from triaudit.report import figures

    fig, notes = triangle.triangle_figure(headlines(two))
    assert notes == []
    # One triangle per panel, never one over another: a row per view, a panel per card.
    assert _panels(fig) == {
        f"{A100}\nof its own datasheet": {A100},
        f"{H200}\nof its own datasheet": {H200},
        f"{A100}\nagainst the best card on each axis": {A100},
        f"{H200}\nagainst the best card on each axis": {H200},
    }
    colours = figures.card_colors(fig)
    assert set(colours) == {A100, H200} and all(len(c) == 1 for c in colours.values())
    assert colours[A100] != colours[H200]
    # The best card on an axis reaches 100 % there: H200's relative triangle tops out at the compute axis.
    h200 = next(ax for ax in fig.axes if ax.get_title() == f"{H200}\nagainst the best card on each axis")
    line = next(ln for ln in h200.get_lines() if ln.get_gid())
    assert max(line.get_ydata()) == pytest.approx(1.0)
    assert "100%" in [t.get_text() for t in h200.texts]


def test_one_card_has_no_pairs_and_one_panel(names, tmp_path):
    write_cards(tmp_path, ["h200"], names)
    rs = load_results([tmp_path])
    sec = summary_section(rs)
    assert not any(p.startswith(("Card against card", "NVIDIA")) for p in sec.paragraphs)
    fig = sec.figures[0][2]
    assert list(_panels(fig)) == [f"{H200_NAME}\nof its own datasheet"]
    # without p2p results there is no GPU-pair row, and allreduce still is
    labels = [label for _, label in sec.tables[0][1].index]
    assert not any("GPU↔GPU" in label for label in labels)


def test_five_cards_ten_sentences_every_cell_filled(names, tmp_path):
    write_cards(tmp_path, FIVE, names)
    rs = load_results([tmp_path])
    h = headlines(rs)
    assert len(h.cards) == 5
    assert len(pairs.sentences(h)) == 10
    t = h.table()
    assert t.shape[1] == 5 and not any(c in ("", None) for c in t.to_numpy().ravel())
    fig, notes = triangle.triangle_figure(h)
    cards_drawn = [cards for cards in _panels(fig).values()]
    assert len(cards_drawn) == 10 and all(len(c) == 1 for c in cards_drawn)  # 5 cards x 2 views


def test_a_corner_missing_for_one_card_is_said_everywhere(names, tmp_path):
    write_cards(tmp_path, ["h200", "a100-sxm-80"], names, leave_out=("memcpy",))
    rs = load_results([tmp_path])
    h = headlines(rs)
    # write_cards leaves the corner out of the LAST card given: the A100
    h2d = h.table().xs("pinned copy host → device, largest (GB/s, % of the PCIe link)", level="figure")
    assert h2d[A100].iloc[0] == "not run" and h2d[H200].iloc[0].endswith("(86%)")
    (s,) = pairs.sentences(h)
    assert f"Not compared: movement: {A100} not run" in s
    _fig, notes = triangle.triangle_figure(h)
    assert f"{A100}: no movement figure (drawn at the centre)" in notes


def test_report_opens_with_the_summary_and_writes_summary_md(names, tmp_path):
    write_cards(tmp_path / "runs", ["h200", "a100-sxm-80"], names)
    prices = tmp_path / "prices.toml"
    prices.write_text('[cards."h200"]\nrent_per_hour = 3.5\n\n[cards."a100-sxm-80"]\nrent_per_hour = 1.5\n')
    assert cli.main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "rep"), "--prices", str(prices)]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert next(line for line in md.splitlines() if line.startswith("## ")) == "## Summary: the triangle at a glance"
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert summary.startswith("# triaudit summary")
    assert "| corner | figure | NVIDIA A100-SXM4-80GB (synthetic) | NVIDIA H200 (synthetic) |" in summary
    assert "USD per PFLOP/s-hour of BF16 GEMM (burst)" in summary
    assert "![The triangle" in summary and (tmp_path / "rep" / "summary_triangle.png").exists()
    # per unit of money: the A100's PFLOP/s-hour costs 1.5 / its TFLOP/s against 3.5 / the H200's
    h = headlines(load_results([tmp_path / "runs"]))
    ratio = (1.5 / h.value("bf16/burst", A100).median) / (3.5 / h.value("bf16/burst", H200).median)
    assert f"per unit of money: {ratio:.2f}× compute" in summary


def test_no_gpu_report_has_no_summary(no_gpu_json, tmp_path):
    assert cli.main(["report", str(no_gpu_json), "--out", str(tmp_path / "rep")]) == 0
    assert not (tmp_path / "rep" / "summary.md").exists()
    assert "Summary" not in (tmp_path / "rep" / "report.md").read_text()


def test_a_card_with_no_corner_figure_gets_no_column(names, tmp_path):
    """A plain Google Benchmark file (not triaudit's) beside a card: the summary shows the card only."""
    write_cards(tmp_path / "runs", ["h200"], names)
    plain = {
        "context": {
            "date": "2026-01-01T00:00:00+00:00",
            "host_name": "synthetic-host",
            "library_build_type": "release",
        },
        "benchmarks": [
            {
                "name": "BM_synthetic",
                "run_name": "BM_synthetic",
                "run_type": "iteration",
                "repetitions": 1,
                "repetition_index": 0,
                "threads": 1,
                "iterations": 100,
                "real_time": 12.5,
                "cpu_time": 12.4,
                "time_unit": "ns",
            }
        ],
    }
    (tmp_path / "runs" / "plain_synthetic.json").write_text(__import__("json").dumps(plain))
    h = headlines(load_results([tmp_path / "runs"]))
    assert h.cards == [H200]


def test_a_card_that_needs_four_gpus_is_quoted_per_gpu_beside_one_that_needs_one(names, tmp_path):
    write_cards(tmp_path, ["rtx-4090", "h200"], names)
    h = headlines(load_results([tmp_path]))
    rtx = next(c for c in h.cards if "4090" in c)
    answers = workloads.binding(h)["Llama-3-70B decode, batch 1"]
    four = answers[rtx]
    assert four.startswith("4 GPUs needed") and "token/s per GPU (" in four and " in all)" in four
    per_gpu = float(re.search(r"≈ ([\d,.]+) token/s per GPU", four).group(1).replace(",", ""))
    total = float(re.search(r"\(([\d,.]+) in all\)", four).group(1).replace(",", ""))
    assert total == pytest.approx(4 * per_gpu, rel=0.02)
    assert answers[H200].startswith("≈ ") and "in all" not in answers[H200]  # one GPU: no total to add


def test_implausible_figures_are_flagged_where_they_are_quoted(names, tmp_path):
    """A pinned copy three times the PCIe link's rate and a BF16 sustained ceiling above its burst
    keep their numbers and say why they cannot be right (fails on 3ffa9c5: printed as they were)."""

    def slower(case: str) -> float:
        if case.startswith("memcpy/h2d/pinned"):
            return 1 / 3  # three times as fast: 258 % of the link
        if case == "gemm/ceiling/bf16/sustained":
            return 0.8  # 0.76 / 0.8 = 95 % of the datasheet, above the burst's 84 %
        return 1.0

    write_cards(tmp_path, ["h200"], names, slower=slower)
    h = headlines(load_results([tmp_path]))
    (card,) = h.cards
    t = h.table()
    h2d = t.xs("pinned copy host → device, largest (GB/s, % of the PCIe link)", level="figure")[card].iloc[0]
    assert "(258%) ⚠ above the PCIe link's theoretical rate" in h2d
    held = t.xs("BF16 dense GEMM, sustained (TFLOP/s)", level="figure")[card].iloc[0]
    assert held.endswith("⚠ sustained above burst")
    burst = t.xs("BF16 dense GEMM, burst (TFLOP/s)", level="figure")[card].iloc[0]
    d2h = t.xs("pinned copy device → host, largest (GB/s, % of the PCIe link)", level="figure")[card].iloc[0]
    assert "⚠" not in burst and "⚠" not in d2h  # the plausible figures beside them are not flagged
