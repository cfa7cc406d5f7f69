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
