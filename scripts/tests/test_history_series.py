"""`triaudit history` on a synthetic 14-night series of one card (synthetic_series.py: every GEMM and
STREAM case of the catalogue, 0.3 % drift from night to night, BF16 9 % slower from the tenth
night): the verdicts exactly right, history.csv as change from the first run, and history.png as a
reader needs it (the card in the title, one y scale for every panel, the regression first, ticks
that do not overlap). NOT MEASUREMENTS: synthetic figures."""

from __future__ import annotations

import csv
import re

import pytest
from conftest import _build_dir
from synthetic_cards import catalogue
from synthetic_series import BF16, night_stamp, write_series

from triaudit import commands as cli
from triaudit.judge import compare as C
from triaudit.judge import history_plot

DROP_NIGHT = 9  # 0-based: the tenth night


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    build = _build_dir()
    if not (build / "benchmarks" / "gemm" / "triaudit_gemm").exists():
        pytest.skip(f"{build} not built (scripts/test.sh builds it first)")
    names = {k: v for k, v in catalogue(build).items() if k in ("gemm", "stream")}
    root = tmp_path_factory.mktemp("series")
    return write_series(root, "h100-sxm", names, drop_night=DROP_NIGHT)


def test_the_bf16_drop_is_the_only_regression_and_is_found_on_its_night(series, tmp_path, capsys):
    out = tmp_path / "h"
    assert cli.main(["history", *map(str, series), "--out", str(out)]) == 1
    said = capsys.readouterr().out
    rows = list(csv.DictReader((out / "history.csv").open()))
    slower = {(r["case"], r["run"]) for r in rows if r["verdict"] == "slower"}
    bf16 = {r["case"] for r in rows if re.search(BF16, r["case"])}
    assert bf16 and {c for c, _ in slower} == bf16  # every BF16 case, nothing else
    assert {run for _, run in slower} == {f"{night_stamp(DROP_NIGHT)}-synthetic"}  # on its night only
    assert f"regression: {sorted(bf16)[0]} in {night_stamp(DROP_NIGHT)}" in said
    # Change from the first run, + faster: 1 / 1.09 - 1 = -8.3 % for BF16 after the drop; the rest
    # stays within the drift (0.3 % a night, the repetitions' own 0.2 %).
    last = [r for r in rows if r["run"] == f"{night_stamp(13)}-synthetic"]
    for r in last:
        pct = float(r["faster_pct"])
        if r["case"] in bf16:
            assert -10.0 < pct < -6.5, r
        else:
            assert abs(pct) < 2.0, r


def test_the_picture_puts_the_regression_first_on_one_scale_with_the_card_named(series):
    _, table = C.history(series, series[0].parent.parent / "h-test")
    runs = [p.name for p in series]
    fig = history_plot.figure(table, runs, "NVIDIA H100 80GB HBM3", 0.02, True)
    try:
        assert "NVIDIA H100 80GB HBM3" in fig._suptitle.get_text() and "SYNTHETIC" in fig._suptitle.get_text()
        axes = [ax for ax in fig.axes if ax.axison]
        limits = {ax.get_ylim() for ax in axes}
        assert len(limits) == 1  # one y scale: a 0.3 % wobble cannot look like the 9 % drop
        lo, hi = limits.pop()
        assert lo < -8.3 and hi < 10  # the drop fits; the scale is not stretched by noise
        first = axes[1].get_title(loc="left")
        assert first.startswith("REGRESSED gemm, bf16") and "slower at 01-10" in first
        # One panel for the BF16 regression, not one per shape.
        assert sum("REGRESSED" in ax.get_title(loc="left") for ax in axes) == 1
        # Ticks: dates, at most seven, none overlapping its neighbour.
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in axes:
            boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
            assert 0 < len(boxes) <= history_plot.MAX_TICKS
            assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:])), ax.get_title(loc="left")
        assert [t.get_text() for t in axes[0].get_xticklabels()][0] == "01-01"
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
