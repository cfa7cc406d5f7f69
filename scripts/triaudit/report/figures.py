"""A report's figures as PNG bytes, one after another, in the process that made them, with what a
reader needs checked: the smallest text in pixels at the figure's own size, and any text that
falls outside the figure (cut off in the PNG)."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

DPI = 110


@dataclass
class Drawn:
    png: bytes
    width_px: int
    min_font_px: float  # the smallest text, in the PNG's pixels
    text_outside: list[str] = field(default_factory=list)  # text cut off by the figure's edge


def thin_minor_ticks(fig) -> None:
    """Minor ticks (and their grid lines) at 2 and 5 of each decade on base-10 log axes: eight per
    decade crowd the grid without helping the eye."""
    import matplotlib.ticker

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_minor_locator(), matplotlib.ticker.NullLocator):
                continue  # an axis labelled at 1, 2, 5 (core/numbers.si_axis) has no minor ticks
            if axis.get_scale() == "log" and getattr(axis.get_transform(), "base", 10) == 10:
                axis.set_minor_locator(matplotlib.ticker.LogLocator(base=10, subs=(2.0, 5.0)))


def _texts(fig) -> list:
    """The text a reader sees: visible, not empty, and for tick labels only those at ticks inside
    the axis's view (matplotlib keeps labels for ticks it does not draw)."""
    from matplotlib.text import Text

    hidden = set()
    for ax in fig.axes:
        for axis, i in ((ax.xaxis, 0), (ax.yaxis, 1)):
            lo, hi = sorted(axis.get_view_interval())
            for label in axis.get_ticklabels(which="both"):
                v = label.get_position()[i]
                if not (lo - abs(lo) * 1e-9 <= v <= hi + abs(hi) * 1e-9):
                    hidden.add(id(label))
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]


def draw(fig) -> Drawn:
    thin_minor_ticks(fig)
    fig.set_dpi(DPI)
    fig.canvas.draw()  # lays the figure out at the DPI it is saved at: extents below are the PNG's
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    texts = _texts(fig)
    outside = []
    for t in texts:
        try:
            b = t.get_window_extent(renderer)
        except (RuntimeError, ValueError):
            continue
        if b.x0 < -1 or b.y0 < -1 or b.x1 > width + 1 or b.y1 > height + 1:
            outside.append(t.get_text().strip()[:60])
    smallest = min((t.get_fontsize() for t in texts), default=0.0) * DPI / 72
    # The canvas drawn above is the PNG: encode its pixels instead of letting savefig draw the
    # whole figure a second time (half of a report's figure time).
    from PIL import Image  # matplotlib's own dependency

    buf = io.BytesIO()
    Image.frombuffer("RGBA", fig.canvas.get_width_height(), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).save(
        buf, format="png", compress_level=6
    )
    return Drawn(buf.getvalue(), int(round(width)), smallest, outside)


def render(figures: list[tuple[str, object]]) -> dict[str, Drawn | str]:
    """{stem: Drawn}, or for a figure matplotlib cannot draw, why (one line, no file)."""
    out: dict[str, Drawn | str] = {}
    for stem, fig in figures:
        try:
            out[stem] = draw(fig)
        except Exception as e:  # noqa: BLE001 - a figure that cannot be drawn is said, not a traceback
            out[stem] = " ".join(f"{type(e).__name__}: {e}".split())
    return out


def png(fig) -> bytes:
    return draw(fig).png
