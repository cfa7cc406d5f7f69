"""The report draws its figures in forked children; whatever a child does not deliver, the parent
draws itself, so a report never lacks a figure."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from triaudit import report  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _figures(n=3):
    out = []
    for i in range(n):
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0, 1, 2], [i, i + 1, i * i])
        fig.set_layout_engine("tight")
        out.append((f"figure_{i}", fig))
    return out


def test_children_draw_every_figure(tmp_path):
    figures = _figures()
    drawing = report._FigureRenderer(figures, tmp_path)
    if (os.cpu_count() or 1) > 1:
        assert len(drawing.children) == min(report.FIGURE_WORKERS, len(figures))
    pngs = drawing.result()
    assert sorted(pngs) == [stem for stem, _ in figures]
    for stem, data in pngs.items():
        assert data.startswith(PNG) and (tmp_path / f"{stem}.png").read_bytes() == data
    assert not list(tmp_path.glob(".*.part"))


def test_the_parent_draws_what_a_failed_child_did_not(tmp_path, monkeypatch):
    parent = os.getpid()
    real = report._png

    def failing_in_children(fig):
        if os.getpid() != parent:
            raise RuntimeError("synthetic failure in a drawing child")
        return real(fig)

    monkeypatch.setattr(report, "_png", failing_in_children)
    figures = _figures()
    pngs = report._FigureRenderer(figures, tmp_path).result()
    assert sorted(pngs) == [stem for stem, _ in figures]
    assert all(d.startswith(PNG) and (tmp_path / f"{s}.png").read_bytes() == d for s, d in pngs.items())
