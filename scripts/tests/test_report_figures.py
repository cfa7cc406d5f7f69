"""The report draws its figures in forked children; whatever a child does not deliver, the parent
draws itself, so a report never lacks a figure."""

import io
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from triaudit.report import page as report  # noqa: E402

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


def _report_figures(tmp_path):
    """The report's own figures from two synthetic cards with energy counters: among them, axes
    legends placed "best" (the energy figure) and placed by the figure's code."""
    from synthetic import synthetic_corners_result, write
    from synthetic_energy import synthetic_energy_result

    from triaudit.report import sections

    root = tmp_path / "results"
    for card, key in (("NVIDIA H100 80GB HBM3", "nvidia-h100"), ("NVIDIA H200", "nvidia-h200")):
        write(root / key / "run1" / "triaudit_synthetic_energy.json", synthetic_energy_result(card))
        write(root / key / "run1" / "triaudit_synthetic.json", synthetic_corners_result(card))
    rs, _ = report._frame([root])
    return [(stem, fig) for s in sections.all_sections(rs) for stem, _, fig in s.figures]


def test_laid_out_once_the_png_is_the_one_savefig_draws(tmp_path):
    # _png lays a figure out once and fixes its "best" legends where that search put them; the
    # picture must be the one savefig makes laying the figure out itself (three searches).
    ours, theirs = _report_figures(tmp_path), _report_figures(tmp_path)
    assert [s for s, _ in ours] == [s for s, _ in theirs] and len(ours) >= 4
    best = [ax.get_legend()._loc == 0 for _, fig in ours for ax in fig.axes if ax.get_legend() is not None]
    assert any(best) and not all(best)
    for (stem, fig), (_, same) in zip(ours, theirs):
        png = report._png(fig)
        report._thin_minor_ticks(same)
        buf = io.BytesIO()
        same.savefig(buf, format="png", dpi=report.DPI)
        assert png == buf.getvalue(), stem
        assert fig.get_layout_engine() is None or type(fig.get_layout_engine()).__name__ == "PlaceHolderLayoutEngine"
    plt.close("all")


def test_the_costliest_figures_are_taken_first(tmp_path):
    # A figure taken last should be a small one: the allreduce figure (one axes, 72 lines and a
    # 72-entry legend) once came last and was drawn alone while the other core waited.
    small, _ = plt.subplots(figsize=(3, 2))
    small.axes[0].plot([0, 1], [0, 1], label="one")
    small.axes[0].legend()
    crowded, ax = plt.subplots(figsize=(3, 2))
    for i in range(72):
        ax.plot([0, 1], [i, i + 1], label=f"line {i}")
    ax.legend()
    panels, axes = plt.subplots(2, 2, figsize=(3, 2))
    for a in axes.flat:
        a.plot([0, 1], [0, 1])
    figures = [("small", small), ("panels", panels), ("crowded", crowded)]
    assert report._drawing_cost(crowded) > report._drawing_cost(panels) > report._drawing_cost(small)
    drawing = report._FigureRenderer(figures, tmp_path)
    assert [figures[i][0] for i in drawing.order] == ["crowded", "panels", "small"]
    drawing.result()
    plt.close("all")
