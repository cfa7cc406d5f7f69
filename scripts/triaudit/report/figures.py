"""A report's figures as PNG bytes, with what a reader needs checked: the smallest text in pixels
at the figure's own size, and any text that falls outside the figure (cut off in the PNG).

Drawing is most of a figure's cost and needs nothing but the figure, so Renderer hands each one,
pickled, to a pool of worker processes as soon as its section has made it: the figures are drawn on
the second core while the report's other sections are still being built. A figure that cannot be
pickled, or a machine where the pool cannot start, is drawn in this process instead."""

from __future__ import annotations

import io
import pickle
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

DPI = 110


@dataclass
class Drawn:
    png: bytes
    width_px: int
    min_font_px: float  # the smallest text, in the PNG's pixels
    text_outside: list[str] = field(default_factory=list)  # text cut off by the figure's edge
    card_colors: dict[str, list[str]] = field(default_factory=dict)  # card -> the colours its artists are drawn in


def thin_minor_ticks(fig) -> None:
    """Minor ticks (and their grid lines) at 2 and 5 of each decade on base-10 log axes: eight per
    decade crowd the grid without helping the eye."""
    import matplotlib.ticker

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_minor_locator(), matplotlib.ticker.NullLocator):
                continue  # an axis labelled at 1, 2, 5 (report/axes.si_axis) has no minor ticks
            if axis.get_scale() == "log" and getattr(axis.get_transform(), "base", 10) == 10:
                axis.set_minor_locator(matplotlib.ticker.LogLocator(base=10, subs=(2.0, 5.0)))


def _texts(fig) -> list:
    """The text a reader sees: visible, not empty, and for tick labels only those at ticks inside
    the axis's view of an axes that is drawn (matplotlib keeps labels for ticks it does not draw)."""
    from matplotlib.text import Text

    hidden: set[int] = set()
    for ax in fig.axes:
        if not ax.axison:  # an axes switched off draws no tick label at all
            hidden.update(id(t) for axis in (ax.xaxis, ax.yaxis) for t in axis.get_ticklabels(which="both"))
            continue
        for axis, i in ((ax.xaxis, 0), (ax.yaxis, 1)):
            lo, hi = sorted(axis.get_view_interval())
            for label in axis.get_ticklabels(which="both"):
                v = label.get_position()[i]
                if not (lo - abs(lo) * 1e-9 <= v <= hi + abs(hi) * 1e-9):
                    hidden.add(id(label))
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]


def _artist_colors(artist) -> list[str]:
    """The colours an artist is drawn in (hex, no alpha): a line's colour, a patch's or a
    collection's face, else its edge where the face is not drawn (hollow markers, outlines)."""
    from matplotlib.collections import Collection
    from matplotlib.colors import to_hex
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    def visible(colors) -> list:
        return [c for c in colors if len(c) < 4 or c[3] > 0]

    if isinstance(artist, Line2D):
        return [to_hex(artist.get_color())]
    if isinstance(artist, Patch):
        face = visible([artist.get_facecolor()]) if artist.get_fill() else []
        return [to_hex(c) for c in (face or visible([artist.get_edgecolor()]))]
    if isinstance(artist, Collection):
        face = visible(list(artist.get_facecolor()))
        colors = face or visible(list(artist.get_edgecolor()))
        return sorted({to_hex(c) for c in colors})
    return []


def card_colors(fig) -> dict[str, list[str]]:
    """{card: the distinct colours of the artists the figure drew for it} (core/palette.py: each
    artist drawn for a card carries the card's gid): the figure's own record of its colours."""
    from triaudit.core import palette

    found: dict[str, set[str]] = {}
    for artist in fig.findobj(lambda a: palette.card_of_gid(a.get_gid()) is not None):
        if artist.get_visible():
            found.setdefault(palette.card_of_gid(artist.get_gid()), set()).update(_artist_colors(artist))
    return {card: sorted(c) for card, c in sorted(found.items())}


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
    # The PNG's own width (the canvas's whole pixels), which the page shows it at.
    return Drawn(buf.getvalue(), fig.canvas.get_width_height()[0], smallest, outside, card_colors(fig))


def _said(e: BaseException) -> str:
    return " ".join(f"{type(e).__name__}: {e}".split())


def _draw_or_say(fig) -> Drawn | str:
    try:
        return draw(fig)
    except Exception as e:  # noqa: BLE001 - a figure that cannot be drawn is said, not a traceback
        return _said(e)


def _draw_pickled(payload: bytes) -> Drawn | str:
    """In a worker: the figure as its section made it, drawn; then forgotten (pyplot keeps it).
    The report's rcParams first: some are read when a figure is drawn, not when it is made."""
    from triaudit.report.section import pyplot

    plt = pyplot()

    fig = pickle.loads(payload)
    try:
        return _draw_or_say(fig)
    finally:
        plt.close(fig)


def render(figures: list[tuple[str, object]]) -> dict[str, Drawn | str]:
    """{stem: Drawn}, or for a figure matplotlib cannot draw, why (one line, no file); in this process."""
    return {stem: _draw_or_say(fig) for stem, fig in figures}


# A figure that takes longer than this in a worker is said "not drawn" rather than waited for.
FIGURE_TIMEOUT_S = 300.0


class Renderer:
    """Draws figures in `workers` processes while the caller goes on; results() waits for them.
    With workers=0, or where a pool cannot start, every figure is drawn in this process."""

    def __init__(self, workers: int = 2):
        self._pool: ProcessPoolExecutor | None = None
        if workers > 0:
            try:
                import multiprocessing
                from multiprocessing import forkserver

                from triaudit.core.io import interrupts
                from triaudit.core.io.interrupts import ignore_in_worker

                # forkserver: workers fork from a clean server process, not from this one (which
                # holds the table and threads of its own); they import matplotlib once, there.
                # worker_start first: the server and every worker ignore Ctrl-C from their start,
                # so only this process handles it (core/io/interrupts.py).
                ctx = multiprocessing.get_context("forkserver")
                ctx.set_forkserver_preload(
                    [
                        "triaudit.core.io.worker_start",
                        "triaudit.report.figures",
                        "triaudit.report.axes",
                        "triaudit.report.section",
                    ]
                )
                # The server started now with Ctrl-C held back: it and the workers it forks inherit
                # the block (never a KeyboardInterrupt while they import), then ignore SIGINT.
                with interrupts.blocked():
                    forkserver.ensure_running()
                self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=ignore_in_worker)
            except (OSError, ValueError, ImportError):
                self._pool = None
        self._pending: list[tuple[str, object, Future | None]] = []

    def submit(self, stem: str, fig) -> None:
        future = None
        if self._pool is not None:
            try:
                future = self._pool.submit(_draw_pickled, pickle.dumps(fig, protocol=pickle.HIGHEST_PROTOCOL))
            except Exception:  # noqa: BLE001 - an unpicklable figure (a lambda formatter) is drawn here
                future = None
        self._pending.append((stem, fig, future))

    def results(self) -> dict[str, Drawn | str]:
        out: dict[str, Drawn | str] = {}
        for stem, fig, future in self._pending:
            if future is None:
                out[stem] = _draw_or_say(fig)
                continue
            try:
                out[stem] = future.result(timeout=FIGURE_TIMEOUT_S)
            except FutureTimeout:
                out[stem] = f"took longer than {FIGURE_TIMEOUT_S:.0f} s to draw"
            except Exception:  # noqa: BLE001 - the worker died (killed, out of memory): draw it here
                out[stem] = _draw_or_say(fig)
        return out

    def close(self, interrupted: bool = False) -> None:
        """Stops the pool. After an interrupt its workers (which ignore SIGINT) are ended at once
        and waited for, so none is left writing to a pipe this process has closed."""
        if self._pool is None:
            return
        pool, self._pool = self._pool, None
        if not interrupted:
            pool.shutdown(wait=False, cancel_futures=True)
            return
        workers = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for w in workers:
            w.terminate()
        for w in workers:
            w.join(timeout=10)

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, kind, *exc) -> None:
        self.close(interrupted=kind is not None and issubclass(kind, KeyboardInterrupt))


def png(fig) -> bytes:
    return draw(fig).png
