"""A report's figures as PNG bytes, one after another, in the process that made them."""

from __future__ import annotations

import io

DPI = 110


def thin_minor_ticks(fig) -> None:
    """Minor ticks (and their grid lines) at 2 and 5 of each decade on base-10 log axes: eight per
    decade crowd the grid without helping the eye."""
    import matplotlib.ticker

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log" and getattr(axis.get_transform(), "base", 10) == 10:
                axis.set_minor_locator(matplotlib.ticker.LogLocator(base=10, subs=(2.0, 5.0)))


def png(fig) -> bytes:
    thin_minor_ticks(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def render(figures: list[tuple[str, object]]) -> dict[str, bytes | str]:
    """{stem: PNG bytes}, or for a figure matplotlib cannot draw, why (one line, no file)."""
    out: dict[str, bytes | str] = {}
    for stem, fig in figures:
        try:
            out[stem] = png(fig)
        except Exception as e:  # noqa: BLE001 - a figure that cannot be drawn is said, not a traceback
            out[stem] = " ".join(f"{type(e).__name__}: {e}".split())
    return out
