"""report/figures.py: what a figure's PNG holds and what is checked about it."""

import io

import numpy as np
from PIL import Image

from triaudit.report import figures
from triaudit.report.section import pyplot


def _fig():
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2, 3], [3, 1, 2], label="a line")
    ax.set_xlabel("x label")
    ax.legend()
    fig.set_layout_engine("tight")
    return fig


def test_the_png_is_the_figure_as_savefig_draws_it():
    """draw() encodes the canvas it laid out instead of drawing again: the pixels must be savefig's."""
    fig = _fig()
    d = figures.draw(fig)
    ref = io.BytesIO()
    fig.savefig(ref, format="png", dpi=figures.DPI)
    ours = np.asarray(Image.open(io.BytesIO(d.png)).convert("RGBA"))
    theirs = np.asarray(Image.open(io.BytesIO(ref.getvalue())).convert("RGBA"))
    assert ours.shape == theirs.shape == (3 * figures.DPI, 4 * figures.DPI, 4)
    assert (ours != theirs).sum() == 0
    assert d.width_px == 4 * figures.DPI


def test_small_and_cut_text_are_measured():
    fig = _fig()
    fig.text(0.98, 0.5, "a label that runs off the right edge", fontsize=5)
    d = figures.draw(fig)
    assert d.min_font_px == 5 * figures.DPI / 72
    assert d.text_outside == ["a label that runs off the right edge"]


def test_a_worker_draws_every_report_figure_as_this_process_does(tmp_path):
    """The renderer pickles each figure to a worker process: every figure of a synthetic two-card
    report must come back pixel for pixel as drawn here, with the same text checks."""
    from conftest import _build_dir
    from synthetic_cards import catalogue, write_cards

    from triaudit.report import sections
    from triaudit.results.table import load_results

    build = _build_dir()
    if not (build / "benchmarks" / "stream" / "triaudit_stream").exists():
        import pytest

        pytest.skip(f"{build} not built")
    runs = write_cards(tmp_path, ["h200", "a100-sxm-80"], catalogue(build), p2p_gpus=4)
    with figures.Renderer(2) as r:
        secs = sections.all_sections(load_results(runs), on_figure=r.submit)
        assert r._pool is not None  # the pool started: the figures went to workers
        theirs = r.results()
    ours = figures.render([(stem, fig) for s in secs for stem, _, fig in s.figures])
    assert set(theirs) == set(ours) and len(ours) >= 8
    for stem, d in ours.items():
        w = theirs[stem]
        assert isinstance(w, figures.Drawn) and isinstance(d, figures.Drawn), (stem, w, d)
        a = np.asarray(Image.open(io.BytesIO(w.png)).convert("RGBA"))
        b = np.asarray(Image.open(io.BytesIO(d.png)).convert("RGBA"))
        assert a.shape == b.shape and (a != b).sum() == 0, stem
        assert (w.width_px, w.min_font_px, w.text_outside) == (d.width_px, d.min_font_px, d.text_outside), stem


def test_an_unpicklable_figure_is_drawn_here():
    from matplotlib.ticker import FuncFormatter

    fig = _fig()
    fig.axes[0].xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g} x"))  # a lambda: no pickle
    with figures.Renderer(1) as r:
        r.submit("lambda", fig)
        out = r.results()
    assert isinstance(out["lambda"], figures.Drawn) and out["lambda"].width_px == 4 * figures.DPI
