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
import json
from pathlib import Path

import pandas as pd

from triaudit import __version__
from triaudit.core.builddir import git_commit
from triaudit.core.errors import TriauditError
from triaudit.report import figures, sections
from triaudit.report import html as H
from triaudit.report.frames import unknown_cards
from triaudit.report.output import ReportFolder
from triaudit.results import runs as R
from triaudit.results.case_info import SYNTHETIC_BANNER, synthetic_in
from triaudit.results.reading import Reading, collector_paused
from triaudit.results.table import BASE_COLUMNS, ResultSet, load_results


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


def _why_empty(files: list[Path], all_rows: pd.DataFrame, df: pd.DataFrame, include_incomplete: bool) -> str:
    """Why the report has nothing to show, and what to run, in one paragraph; "" when it has."""
    run = (
        "Run the suite on a machine with a GPU (`triaudit run`, or `bash scripts/main.sh`), then "
        "make this report again from its results folder."
    )
    if not files:
        return "No results yet: no result files were given or found. " + run
    if all_rows.empty:
        return f"The {len(files)} result file(s) hold no cases. " + run
    if not df.empty and (df["status"] == "ok").any():
        return ""
    if not include_incomplete and not all_rows["complete"].all() and df.empty:
        return (
            "Every run was interrupted and is left out; `--include-incomplete` shows what they measured, "
            "or run the suite again to completion (`triaudit run`)."
        )
    if set(all_rows["card"]) <= {"no GPU"}:
        reasons = sorted({m for m in all_rows["message"] if isinstance(m, str) and "no CUDA device" in m})
        why = reasons[0].removeprefix("skipped: ") if reasons else "no CUDA device"
        return f"Nothing was measured: every result file was written on a machine without a usable GPU ({why}). " + run
    counts = {s: n for s, n in df["status"].value_counts().items() if n} if not df.empty else {}  # categorical: 0s too
    return (
        f"No case was measured: {', '.join(f'{n} {s}' for s, n in sorted(counts.items())) or 'none ran'}; "
        "the reasons are under each corner below."
    )


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
    if synthetic_in(df):
        header.insert(3, f"**{SYNTHETIC_BANNER}**")
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
    if empty and (df.empty or set(df["card"].dropna()) <= {"no GPU"}):
        # Nothing to show at all: the title, when it was made, why files were not read (a broken
        # manifest is said, never silent), and what to run; nothing else.
        return rs.with_table(df.iloc[0:0]), header[:3] + list(notes) + list(loaded.notes) + [empty, ""]
    if empty:
        header.append(empty)
    header += _library_notes(rs.contexts)
    header.append("")
    return rs, header


def _library_notes(contexts: dict[str, dict]) -> list[str]:
    """What a reader of a plain Google Benchmark file (not triaudit's) must know: a debug build of
    the library, or CPU frequency scaling on, makes its CPU times unrepresentative. (triaudit's own
    cases time the GPU with CUDA events, which neither affects.)"""
    debug, scaling = [], []
    for f, ctx in contexts.items():
        if ctx.get("triaudit_version") or str(ctx.get("executable", "")).startswith(("triaudit", "peer:")):
            continue
        if str(ctx.get("library_build_type", "")).lower() == "debug":
            debug.append(Path(f).name)
        if str(ctx.get("cpu_scaling_enabled", "")).lower() in ("true", "1"):
            scaling.append(Path(f).name)
    out = []
    if debug:
        out.append(
            "Google Benchmark was a debug build when these files were written (its timing loop runs slower): "
            + ", ".join(sorted(debug))
            + "."
        )
    if scaling:
        out.append(
            "CPU frequency scaling was on when these files were written (CPU-timed figures vary with the clock): "
            + ", ".join(sorted(scaling))
            + "."
        )
    return out


def _runs_named(tables, shown: dict) -> list[str]:
    """The run behind each column (and row label) of `tables`, once each: "card: run (...)"; the
    cards of one run description together ("card, card: run (...)")."""
    labels: list[str] = []
    for _, t in tables:
        labels += [str(c) for c in t.columns]
        for level in range(t.index.nlevels):
            labels += [str(v) for v in t.index.get_level_values(level).unique()]
    by_run: dict[str, list[str]] = {}
    for label in dict.fromkeys(labels):
        if label in shown:
            by_run.setdefault("; ".join(shown[label]), []).append(label)
    return [f"{', '.join(cards)}: {run}" for run, cards in by_run.items()]


def _runs_line(tables, shown: dict) -> str:
    """The runs behind a section's tables, named once at its top."""
    named = _runs_named(tables, shown)
    return ("Runs: " + " | ".join(named)) if named else ""


def _notes_of(t: pd.DataFrame) -> list[str]:
    """What a table says under itself (frames.pivot_cells: a reason given once for many cells)."""
    return list(t.attrs.get("notes", ()))


def write_report(
    paths: list[Path],
    out: Path,
    include_incomplete: bool = False,
    *,
    all_runs: bool = False,
    prices=None,
    notes: tuple = (),
    tidy_csv: bool = False,
) -> list[Path]:
    """The report of the result files under `paths`, in the folder `out` (report/output.py: built
    aside, moved into place, nothing stale left); `tidy_csv`: also the whole tidy table as tidy.csv."""
    with collector_paused():
        return _write_report(paths, out, include_incomplete, all_runs, prices, notes, tidy_csv)


def _write_report(paths, out, include_incomplete, all_runs, prices, notes, tidy_csv) -> list[Path]:
    from triaudit.store.source import open_reading

    reading = open_reading(paths)  # the results store's runs where one indexes the paths, else the JSON
    try:
        inputs = {f.resolve() for f in reading.files}
        if Path(out).exists() and not Path(out).is_dir():
            raise ReportError(f"--out {out}: exists and is not a folder (the report is a folder of files)")
        rs, header = _frame(paths, include_incomplete, all_runs, notes, reading)
    finally:
        reading.close()
    df = rs.table
    with figures.Renderer(FIGURE_WORKERS if not df.empty else 0) as renderer:
        return _write_sections(rs, header, out, inputs, prices, tidy_csv, renderer)


# Processes drawing the figures while the sections are built (report/figures.py Renderer): the
# second core's work on a 2-core machine; more would only queue.
FIGURE_WORKERS = 2


def _write_sections(rs, header, out, inputs, prices, tidy_csv, renderer) -> list[Path]:
    df = rs.table
    # prices: sections/cost.py Prices; each figure goes to the renderer as its section makes it. With
    # nothing measured, other people's published figures of four cards stand in, labelled so.
    secs = (
        sections.all_sections(rs, prices=prices, on_figure=renderer.submit)
        if not df.empty
        else [sections.published.reference_section()]
    )
    names = (
        ["report.md", "report.html"]
        + (["summary.md"] if any(s.key == "summary" and s.tables for s in secs) else [])
        + [f"{s.key}.csv" for s in secs if s.csv is not None and not s.csv.empty]
        + [f"{stem}.png" for s in secs for stem, _, _ in s.figures]
        + (["tidy.csv"] if tidy_csv else [])
    )
    folder = ReportFolder(out, inputs)
    try:
        folder.check(names)
        written = _write_files(folder, rs, header, secs, tidy_csv, renderer)
        folder.commit()
    finally:
        folder.discard()
        if secs and any(s.figures for s in secs):
            import matplotlib.pyplot as plt

            for s in secs:
                for _, _, fig in s.figures:
                    plt.close(fig)
    return written


def _write_files(
    folder: ReportFolder, rs: ResultSet, header: list[str], secs: list, tidy_csv: bool, renderer: figures.Renderer
) -> list[Path]:
    shown, written = rs.shown, []
    pngs = renderer.results()
    drawn = {stem: d for stem, d in pngs.items() if isinstance(d, figures.Drawn)}

    def not_drawn(stem: str, caption: str) -> str:
        return f"{caption}: not drawn ({pngs[stem]!s})."

    md = [header[0], ""] + [x for h in header[2:] if h for x in (h, "")]
    head = [
        f"<p class='banner'>{H.inline(h)}</p>" if h.startswith("**") else f"<p>{H.inline(h)}</p>"
        for h in header[2:]
        if h
    ]
    first, blocks, side = None, [], []
    for s in secs:
        if not s.tables and not s.figures and not s.notes:
            continue
        block = H.Block(s.key, s.title, folds=s.folds)
        md += [f"## {s.title}", ""]
        if s.banner and f"**{s.banner}**" not in header:  # the page opens with it already
            md += [f"**{s.banner}**", ""]
            block.parts.append(f"<p class='banner'><strong>{H.inline(s.banner)}</strong></p>")
        runs = _runs_line(s.tables, shown)
        if runs:  # once per section: every table of it is made of these runs
            md += [runs, ""]
            block.parts.append(f"<p class='runs'>{H.inline(runs)}</p>")
        for i, (caption, t) in enumerate(s.tables):
            notes = _notes_of(t)
            md += [f"### {caption}", "", _md_table(t), ""] + [x for n in notes for x in (n, "")]
            html_table = (
                f"<h3>{H.inline(caption)}</h3>"
                + H.table(t)
                + "".join(f"<p class='note'>{H.inline(n)}</p>" for n in notes)
            )
            if i == 0 and s.aside:  # said beside the section's first table (the summary's per-dollar answer)
                md += [x for a in s.aside for x in (a, "")]
                side += [f"<p>{H.inline(a)}</p>" for a in s.aside]
            block.parts.append(html_table)
        if s.more:  # detail tables: in the Markdown as they are, folded on the page
            inner = []
            for caption, t in s.more:
                notes = _notes_of(t)
                md += [f"### {caption}", "", _md_table(t), ""] + [x for n in notes for x in (n, "")]
                inner.append(
                    f"<h3>{H.inline(caption)}</h3>"
                    + H.table(t)
                    + "".join(f"<p class='note'>{H.inline(n)}</p>" for n in notes)
                )
            block.parts.append(
                f"<details class='more'><summary>More: {len(s.more)} detail table{'s' if len(s.more) > 1 else ''}"
                "</summary>" + "".join(inner) + "</details>"
            )
        for para in s.paragraphs:
            md += [para, ""]
            block.parts.append(f"<p>{H.inline(para)}</p>")
        for stem, caption, _fig in s.figures:
            if stem in drawn:
                d = drawn[stem]
                written.append(folder.write(f"{stem}.png", d.png))
                md += [f"![{caption}]({stem}.png)", ""]
                # Shown at its own size (no wider than the page's column; on a phone its box
                # scrolls sideways instead of shrinking it); the data- attributes let a browser
                # check say whether its smallest text is readable as shown and which colour each
                # card was drawn in (report/figures.py card_colors).
                colours = html.escape(json.dumps(d.card_colors, sort_keys=True), quote=True)
                block.parts.append(
                    f"<figure><div class='scroll fig'><img alt='{html.escape(caption)}' data-name='{stem}' "
                    f"width='{d.width_px}' data-min-font-px='{d.min_font_px:.1f}' "
                    f"data-text-outside='{len(d.text_outside)}' data-card-colors='{colours}' "
                    f"src='data:image/png;base64,{base64.b64encode(d.png).decode()}'></div>"
                    f"<figcaption>{H.inline(caption)}</figcaption></figure>"
                )
            else:
                md += [not_drawn(stem, caption), ""]
                block.parts.append(f"<p>{html.escape(not_drawn(stem, caption))}</p>")
        if s.notes:
            md += ["Not measured:", ""] + [f"- {n}" for n in s.notes] + [""]
            block.parts.append(
                "<p>Not measured:</p><ul>" + "".join(f"<li>{H.inline(n)}</li>" for n in s.notes) + "</ul>"
            )
        if s.csv is not None and not s.csv.empty:
            s.csv.to_csv(folder.path(f"{s.key}.csv"), index=False)
            written.append(folder.out / f"{s.key}.csv")
        block.counts = _counts(len(s.tables), sum(1 for stem, _, _ in s.figures if stem in drawn))
        if block.folds:
            blocks.append(block)
        else:
            first = block
            if block.parts and s.tables:  # the first table (after the banner and runs) leads the first screen
                lead = 1 + bool(s.banner and f"**{s.banner}**" not in header) + bool(runs)
                block.parts = ["".join(block.parts[:lead])] + block.parts[lead:]
    written.insert(0, folder.write("report.md", "\n".join(md) + "\n"))
    summary = next((s for s in secs if s.key == "summary" and s.tables), None)
    if summary is not None:  # the summary alone, ready to publish
        written.append(folder.write("summary.md", _summary_md(summary, header, shown, drawn)))
    written.insert(1, folder.write("report.html", H.page("triaudit report", head, first, side, blocks)))
    if tidy_csv:
        _write_tidy(rs.table, folder.path("tidy.csv"))
        written.append(folder.out / "tidy.csv")
    return written


def _counts(tables: int, figs: int) -> str:
    parts = ([f"{tables} table{'s' if tables != 1 else ''}"] if tables else []) + (
        [f"{figs} figure{'s' if figs != 1 else ''}"] if figs else []
    )
    return ", ".join(parts)


def _summary_md(s, header: list[str], shown, drawn: dict) -> str:
    md = ["# triaudit summary", "", header[2] if len(header) > 2 else "", ""]
    if s.banner:
        md += [f"**{s.banner}**", ""]
    runs = _runs_line(s.tables, shown)
    md += [runs, ""] if runs else []
    for i, (caption, t) in enumerate(s.tables):
        md += [f"## {caption}", "", _md_table(t), ""] + [x for n in _notes_of(t) for x in (n, "")]
        if i == 0:
            md += [x for a in s.aside for x in (a, "")]
    md += [x for p in s.paragraphs for x in (p, "")]
    md += [x for stem, caption, _ in s.figures if stem in drawn for x in (f"![{caption}]({stem}.png)", "")]
    return "\n".join(md) + "\n"


def _write_tidy(df: pd.DataFrame, path: Path) -> None:
    # Always with its header, so scripts reading it need no special case for an empty report.
    if df.empty:
        pd.DataFrame(columns=[c for c in BASE_COLUMNS if c != "file"] + ["complete"]).to_csv(path, index=False)
    else:
        df[[c for c in df.columns if c not in ("file", "run_dir")]].to_csv(path, index=False)
