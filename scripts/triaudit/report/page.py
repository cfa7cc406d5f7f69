"""`triaudit report`: result files -> per-corner tables (Markdown, CSV), PNG plots and one
self-contained HTML page (tables and plots embedded; opens with no server).

Cards are columns; cells are the median over repetitions ± half the min-max range, with the
fraction of the datasheet peak where the card is known (specs.py). Each card's column comes from
its newest complete run, named under every table (runs.py); `all_runs` gives every run its own
column. Runs whose manifest says they were interrupted are left out unless asked for, and listed.
An empty report says why it is empty and what it will hold. Never writes over an input.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import os
import sys
from pathlib import Path

import pandas as pd

from triaudit import __version__
from triaudit.core.builddir import git_commit
from triaudit.core.errors import TriauditError
from triaudit.report import sections, tidy_csv
from triaudit.report.frames import unknown_cards
from triaudit.results import runs as R
from triaudit.results.reading import Reading, collector_paused, scan_paths
from triaudit.results.table import BASE_COLUMNS, ROW_COLUMNS, ResultSet, load_results

WHAT_IT_HOLDS = (
    "When a run exists, this report shows per corner, with cards as columns: STREAM bandwidth "
    "(HBM and L2), GEMM throughput per precision against the datasheet and a measured roofline, "
    "host/device copies, kernel launch cost eager vs CUDA Graph, NCCL allreduce bandwidth, and "
    "the run beside other tools' published figures."
)


class ReportError(TriauditError):
    pass


def _md_table(t: pd.DataFrame) -> str:
    idx_names = [n or "" for n in (t.index.names or [""])]
    cols = [str(c) for c in t.columns]
    lines = ["| " + " | ".join(idx_names + cols) + " |", "|" + "---|" * (len(idx_names) + len(cols))]
    for key, row in zip(t.index, t.itertuples(index=False, name=None)):
        keys = key if isinstance(key, tuple) else (key,)
        vals = ["" if pd.isna(v) else str(v) for v in row]
        lines.append("| " + " | ".join([str(k) for k in keys] + vals) + " |")
    return "\n".join(lines)


def _thin_minor_ticks(fig) -> None:
    """Minor ticks (and their grid lines) at 2 and 5 of each decade on base-10 log axes: matplotlib's
    eight per decade were a third to a half of a large figure's drawing time, for lines that the eye
    reads the same."""
    import matplotlib.ticker

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log" and getattr(axis.get_transform(), "base", 10) == 10:
                axis.set_minor_locator(matplotlib.ticker.LogLocator(base=10, subs=(2.0, 5.0)))


DPI = 110


def _lay_out_once(fig) -> None:
    """Lays the figure out (its tight layout, at the DPI it is saved at), then fixes each legend
    placed "best" where that search put it, and drops the layout engine: savefig would lay it out
    in a draw of its own and search again in each of three passes (layout, that draw, the real
    one), a tenth of a large figure's time. The PNG is the same, byte for byte (tested)."""
    from matplotlib.layout_engine import TightLayoutEngine

    engine = fig.get_layout_engine()
    if not isinstance(engine, TightLayoutEngine):
        return
    dpi = fig.dpi
    fig.dpi = DPI
    try:
        engine.execute(fig)
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None or getattr(legend, "_loc", None) != 0 or not hasattr(legend, "set_loc"):
                continue  # placed by the figure's code (or a matplotlib before 3.8): as it is
            box, anchor = legend.get_window_extent(renderer), legend.get_bbox_to_anchor()
            legend.set_loc(((box.x0 - anchor.x0) / anchor.width, (box.y0 - anchor.y0) / anchor.height))
    finally:
        fig.dpi = dpi
    fig.set_layout_engine("none")


def _png(fig) -> bytes:
    _thin_minor_ticks(fig)
    _lay_out_once(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


# Drawing the figures (layout and rendering) is a third of a large report's time and needs
# nothing but the figures: they are drawn by forked children, one per core, while the parent
# goes on; once the parent has nothing else to do, it draws too. Each process takes the next
# figure not yet taken, the costliest first (figures differ tenfold in cost: fixed shares, or the
# largest figure taken last, left one core drawing while the other waited). A figure a child did
# not deliver is drawn by the parent.
FIGURE_WORKERS = 2


def _drawing_cost(fig) -> float:
    """A rough rank of how long a figure takes to draw, from what is on it: per axes (ticks and
    their labels), per line, scatter set, bar and text, per legend entry (weights fitted to the
    report's own figures; a misjudged one only costs the end of the report some overlap)."""
    cost = 0.004 * sum(len(legend.get_texts()) for legend in fig.legends)
    for ax in fig.axes:
        legend = ax.get_legend()
        cost += 0.1 + 0.002 * len(ax.lines) + 0.003 * len(ax.collections) + 0.0005 * len(ax.patches)
        cost += 0.002 * len(ax.texts) + (0.004 * len(legend.get_texts()) if legend is not None else 0.0)
    return cost


class _FigureRenderer:
    """Draws each (stem, figure) to out/<stem>.png, in forked children that start at once;
    result() draws alongside them, waits and gives {stem: PNG bytes}, drawing itself whatever a
    child did not deliver."""

    def __init__(self, figures: list[tuple[str, object]], out: Path):
        self.figures, self.out = figures, out
        self.order = sorted(range(len(figures)), key=lambda i: -_drawing_cost(figures[i][1]))  # stable
        self.workers = min(FIGURE_WORKERS, len(figures), os.cpu_count() or 1)
        self.children: list[int] = []
        self.taken = None  # the next figure (of self.order) to take, shared with the children
        for stem, _ in figures:  # a PNG left by an earlier report must not pass for this one's
            (out / f"{stem}.png").unlink(missing_ok=True)
        if self.workers < 2 or not hasattr(os, "fork"):
            return
        import multiprocessing

        self.taken = multiprocessing.get_context("fork").Value("i", 0)
        sys.stdout.flush()
        sys.stderr.flush()
        for _ in range(self.workers):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:  # a child: draw figures until none is left, and leave without running anything of the parent's
                code = 1
                try:
                    self._draw_untaken()
                    code = 0
                finally:
                    os._exit(code)
            self.children.append(pid)

    def _draw_untaken(self) -> None:
        """Takes figures one at a time until none is left, writing each PNG whole (aside, then
        renamed); one that fails is left for the parent's last pass, which says why."""
        while True:
            with self.taken.get_lock():
                k = self.taken.value
                self.taken.value = k + 1
            if k >= len(self.order):
                return
            stem, fig = self.figures[self.order[k]]
            try:
                png = _png(fig)
            except Exception:  # noqa: BLE001 - drawn again by the parent, which says why
                continue
            part = self.out / f".{stem}.png.part"
            part.write_bytes(png)
            os.replace(part, self.out / f"{stem}.png")

    def result(self) -> dict[str, bytes | str]:
        """{stem: PNG bytes}, or for a figure that cannot be drawn, why (a message, no file)."""
        if self.children:
            self._draw_untaken()
        for pid in self.children:
            os.waitpid(pid, 0)
        self.children = []
        # A file there was written by this report (old ones were removed first), whole; whatever
        # is missing, the parent draws.
        pngs: dict[str, bytes | str] = {}
        for stem, fig in self.figures:
            path = self.out / f"{stem}.png"
            if path.is_file():
                pngs[stem] = path.read_bytes()
                continue
            try:
                pngs[stem] = _png(fig)
            except Exception as e:  # noqa: BLE001 - a figure matplotlib cannot draw is said, not a traceback
                pngs[stem] = " ".join(f"{type(e).__name__}: {e}".split())  # one line
                continue
            path.write_bytes(pngs[stem])
        return pngs


def _why_empty(files: list[Path], all_rows: pd.DataFrame, df: pd.DataFrame, include_incomplete: bool) -> list[str]:
    if not files:
        return [
            "No result files: no runs yet. Run the suite on a GPU machine (`triaudit run`, or "
            "`bash scripts/main.sh`) and render this report again."
        ]
    if all_rows.empty:
        return ["The result files hold no cases."]
    if not df.empty and (df["status"] == "ok").any():
        return []
    if not include_incomplete and not all_rows.empty and not all_rows["complete"].all() and df.empty:
        return ["Every run was interrupted and is left out; `--include-incomplete` shows what they measured."]
    if set(all_rows["card"]) <= {"no GPU"}:
        reasons = sorted({m for m in all_rows["message"] if isinstance(m, str) and "no CUDA device" in m})
        why = reasons[0].removeprefix("skipped: ") if reasons else "no CUDA device"
        return [
            f"Every result file was written on a machine without a usable GPU ({why}): nothing was measured. "
            "Run the suite on a GPU machine."
        ]
    counts = {s: n for s, n in df["status"].value_counts().items() if n} if not df.empty else {}  # categorical: 0s too
    return [
        f"No case was measured: {', '.join(f'{n} {s}' for s, n in sorted(counts.items())) or 'none ran'} "
        "(reasons under each corner)."
    ]


def _frame(
    paths: list[Path],
    include_incomplete: bool = False,
    all_runs: bool = False,
    notes: tuple = (),
    reading: Reading | None = None,
):
    reading = Reading.start(paths) if reading is None else reading
    files = reading.files
    loaded = load_results(paths, reading)  # its notes: what the scan skipped, then each file's
    all_rows = df = loaded.table
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = [
        "# triaudit report",
        "",
        f"Made {now} by triaudit {__version__}, commit {git_commit()}.",
    ]
    header += list(notes)  # from the caller, e.g. main.sh: "this machine has no usable GPU"
    header += list(loaded.notes)
    if not df.empty:
        partial = sorted(set(df.loc[~df["complete"].astype(bool), "run"].unique()))
        if partial:
            header.append(
                (
                    "Interrupted runs (marked incomplete in their manifest), "
                    + ("included" if include_incomplete else "left out")
                    + ": "
                    + ", ".join(partial)
                )
                + "."
            )
            if not include_incomplete:
                df = df[df["complete"].astype(bool)]
    df, shown, left_out = R.select(df, loaded.runs, loaded.contexts, all_runs)
    rs = ResultSet(df, loaded.contexts, loaded.runs, loaded.notes, shown)
    header += left_out
    cards = sorted(c for c in df["card"].dropna().unique()) if not df.empty else []
    header.append(
        f"{len(files)} result file(s); "
        + ("columns" if all_runs else "cards")
        + f": {', '.join(cards) if cards else 'none'}."
    )
    unlatched = (
        sorted(f for f, ctx in rs.contexts.items() if str(ctx.get("stream_latch", "on")).startswith("off"))
        if not df.empty
        else []
    )
    if unlatched:
        header.append(
            "Measured with the stream hold off (TRIAUDIT_NO_LATCH, for profilers): their times include "
            "launch gaps: " + ", ".join(Path(f).name for f in unlatched) + "."
        )
    unknown = unknown_cards(sorted(set(df["card_name"].unique()))) if not df.empty else []
    if unknown:
        header.append(
            f"No datasheet figures for {', '.join(unknown)}: no fraction of peak is shown for "
            "them (the device-reported memory peak still is)."
        )
    empty = _why_empty(files, all_rows, df, include_incomplete)
    if empty:
        header += empty + [WHAT_IT_HOLDS]
    header.append("")
    return rs, header


def _runs_under(t: pd.DataFrame, shown: dict) -> str:
    """The run behind each column of a table, named under it."""
    labels = [str(c) for c in t.columns]
    for level in range(t.index.nlevels):
        labels += [str(v) for v in t.index.get_level_values(level).unique()]
    named = [f"{label}: {'; '.join(shown[label])}" for label in dict.fromkeys(labels) if label in shown]
    return ("Runs: " + " | ".join(named)) if named else ""


def write_report(
    paths: list[Path],
    out: Path,
    include_incomplete: bool = False,
    *,
    all_runs: bool = False,
    prices=None,
    notes: tuple = (),
    reading: Reading | None = None,
) -> list[Path]:
    """The report of the result files under `paths`, in `out`; `reading`: the reading of those
    files already under way (Reading.start(paths), as the command line starts it)."""
    with collector_paused():
        return _write_report(paths, out, include_incomplete, all_runs, prices, notes, reading)


def _write_report(paths, out, include_incomplete, all_runs, prices, notes, reading) -> list[Path]:
    files = reading.files if reading is not None else scan_paths(paths)[0]
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ReportError(f"--out {out}: exists and is not a folder (the report is a folder of files)")
    inputs = {f.resolve() for f in files}
    rs, header = _frame(paths, include_incomplete, all_runs, notes, reading)
    df = rs.table
    if (out / "tidy.csv").resolve() in inputs:
        raise ReportError(f"refusing to write {out / 'tidy.csv'}: it is one of the inputs")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"--out {out}: cannot be made: {e.strerror or e}") from e
    tidy = _TidyWriter(df, out / "tidy.csv")  # large tables: written while the figures are drawn
    secs = sections.all_sections(rs, prices=prices) if not df.empty else []  # prices: sections/cost.py Prices
    shown = rs.shown
    names = (
        ["report.md", "report.html"]
        + [f"{s.key}.csv" for s in secs]
        + [f"{stem}.png" for s in secs for stem, _, _ in s.figures]
    )
    if not secs:
        names += ["stream.csv"]
    for n in names:
        if (out / n).resolve() in inputs:
            tidy.wait()
            raise ReportError(f"refusing to write {out / n}: it is one of the inputs")
    written: list[Path] = []
    drawing = _FigureRenderer([(stem, fig) for s in secs for stem, _, fig in s.figures], out)

    md = [header[0], ""] + [x for h in header[2:] if h for x in (h, "")]
    body = ["<h1>triaudit report</h1>"] + [f"<p>{html.escape(h)}</p>" for h in header[2:] if h]
    for s in secs:
        if not s.tables and not s.figures and not s.notes:
            continue
        md += [f"## {s.title}", ""]
        body.append(f"<h2>{html.escape(s.title)}</h2>")
        for caption, t in s.tables:
            under = _runs_under(t, shown)
            md += [f"### {caption}", "", _md_table(t), ""] + ([under, ""] if under else [])
            body += [f"<h3>{html.escape(caption)}</h3>", t.to_html(escape=True, na_rep="", border=0)]
            if under:
                body.append(f"<p class='runs'>{html.escape(under)}</p>")
        for stem, caption, _fig in s.figures:
            written.append(out / f"{stem}.png")
            md += [(stem, caption), ""]  # the image goes in once drawn
            body.append((stem, caption))
        if s.notes:
            md += ["Not measured:", ""] + [f"- {n}" for n in s.notes] + [""]
            body.append("<p>Not measured:</p><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in s.notes) + "</ul>")
        if s.csv is not None and not s.csv.empty:
            tidy_csv.write_table(s.csv, out / f"{s.key}.csv")
            written.append(out / f"{s.key}.csv")
    if not any(s.tables for s in secs):
        md.append("No measured results in these runs.")
        body.append("<p>No measured results in these runs.</p>")
        if not (out / "stream.csv").exists() or (out / "stream.csv").resolve() not in inputs:
            pd.DataFrame(columns=["op", "type", "cache", "bytes"]).to_csv(out / "stream.csv", index=False)
            written.append(out / "stream.csv")
    pngs = drawing.result()
    drawn = {stem for stem, png in pngs.items() if isinstance(png, bytes)}
    figures = {out / f"{stem}.png" for stem, _ in drawing.figures}
    written = [w for w in written if w not in figures or w.stem in drawn]

    def not_drawn(stem: str, caption: str) -> str:
        return f"{caption}: not drawn ({pngs[stem]})."

    md = [
        part if isinstance(part, str) else f"![{part[1]}]({part[0]}.png)" if part[0] in drawn else not_drawn(*part)
        for part in md
    ]
    (out / "report.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    written.insert(0, out / "report.md")
    body = [
        part
        if isinstance(part, str)
        else f"<figure><img alt='{html.escape(part[1])}' src='data:image/png;base64,"
        f"{base64.b64encode(pngs[part[0]]).decode()}'><figcaption>{html.escape(part[1])}</figcaption></figure>"
        if part[0] in drawn
        else f"<p>{html.escape(not_drawn(*part))}</p>"
        for part in body
    ]
    if secs and any(s.figures for s in secs):
        import matplotlib.pyplot as plt

        for s in secs:
            for _, _, fig in s.figures:
                plt.close(fig)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>triaudit report</title><style>"
        "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        "th{background:#f4f4f4}img{max-width:100%}figcaption{color:#555;font-size:90%}"
        ".runs{color:#555;font-size:85%}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )
    (out / "report.html").write_text(page, encoding="utf-8")
    written.insert(1, out / "report.html")
    tidy.wait()
    written.append(out / "tidy.csv")
    return written


def _write_tidy(df: pd.DataFrame, path: Path) -> None:
    # Always with its header, so scripts reading it need no special case for an empty report.
    if df.empty:
        pd.DataFrame(columns=[c for c in BASE_COLUMNS if c != "file"] + ["complete"]).to_csv(path, index=False)
    else:
        tidy_csv.write(df, path, [c for c in df.columns if c not in ("file", "run_dir")], ROW_COLUMNS)


class _TidyWriter:
    """Writes tidy.csv. A large table (a hundred cards: hundreds of MB of CSV, the slowest single
    step) is written by a forked child while the parent draws the figures on the other core; if the
    child fails, or there is no fork, the parent writes it itself."""

    FORK_ROWS = 200_000

    def __init__(self, df: pd.DataFrame, path: Path):
        self.df, self.path, self.pid = df, path, None
        if len(df) >= self.FORK_ROWS and hasattr(os, "fork"):
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                pid = os.fork()
            except OSError:
                pid = None
            if pid == 0:  # the child: write, and leave without running anything of the parent's
                code = 1
                try:
                    _write_tidy(df, path)
                    code = 0
                finally:
                    os._exit(code)
            self.pid = pid
        if self.pid is None:
            _write_tidy(df, path)

    def wait(self) -> None:
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        _, status = os.waitpid(pid, 0)
        if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            _write_tidy(self.df, self.path)
