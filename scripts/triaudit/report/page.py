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
from pathlib import Path

import pandas as pd

from triaudit import __version__
from triaudit.core.builddir import git_commit
from triaudit.core.errors import TriauditError
from triaudit.report import figures, sections
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


def _inline(text: str) -> str:
    """Text for the HTML page: escaped, with Markdown's `code spans` as <code> (the Markdown
    report keeps the backticks)."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: not a code span
        return html.escape(str(text))
    return "".join(html.escape(p) if i % 2 == 0 else f"<code>{html.escape(p)}</code>" for i, p in enumerate(parts))


def _html_table(t: pd.DataFrame) -> str:
    """A table with one header row (the index names, then the columns) and the index as row
    headers, a repeated index value spanning its rows: no empty header row, no empty cell."""
    names = [n or "" for n in (t.index.names or [""])]
    head = "".join(f"<th>{_inline(n)}</th>" for n in names) + "".join(f"<th>{_inline(c)}</th>" for c in t.columns)
    keys = [k if isinstance(k, tuple) else (k,) for k in t.index]
    rows = []
    for i, (key, values) in enumerate(zip(keys, t.itertuples(index=False, name=None))):
        cells = []
        for level, k in enumerate(key):
            if i > 0 and keys[i - 1][: level + 1] == key[: level + 1]:
                continue  # spanned by the row above
            span = 1
            while i + span < len(keys) and keys[i + span][: level + 1] == key[: level + 1]:
                span += 1
            attr = f" rowspan='{span}'" if span > 1 else ""
            cells.append(f"<th{attr}>{_inline(k)}</th>")
        cells += [f"<td>{_inline('' if pd.isna(v) else v)}</td>" for v in values]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


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
    # prices: sections/cost.py Prices; each figure goes to the renderer as its section makes it
    secs = sections.all_sections(rs, prices=prices, on_figure=renderer.submit) if not df.empty else []
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
    body = ["<h1>triaudit report</h1>"] + [f"<p>{_inline(h)}</p>" for h in header[2:] if h]
    for s in secs:
        if not s.tables and not s.figures and not s.notes:
            continue
        md += [f"## {s.title}", ""]
        body.append(f"<h2>{_inline(s.title)}</h2>")
        if s.banner:
            md += [f"**{s.banner}**", ""]
            body.append(f"<p class='banner'><strong>{_inline(s.banner)}</strong></p>")
        for caption, t in s.tables:
            under = _runs_under(t, shown)
            md += [f"### {caption}", "", _md_table(t), ""] + ([under, ""] if under else [])
            body += [f"<h3>{_inline(caption)}</h3>", _html_table(t)]
            if under:
                body.append(f"<p class='runs'>{_inline(under)}</p>")
        for para in s.paragraphs:
            md += [para, ""]
            body.append(f"<p>{_inline(para)}</p>")
        for stem, caption, _fig in s.figures:
            if stem in drawn:
                d = drawn[stem]
                written.append(folder.write(f"{stem}.png", d.png))
                md += [f"![{caption}]({stem}.png)", ""]
                # Shown at its own size (no wider than the page's column); the data- attributes
                # let a browser check say whether its smallest text is readable as shown.
                body.append(
                    f"<figure><img alt='{html.escape(caption)}' data-name='{stem}' width='{d.width_px}' "
                    f"data-min-font-px='{d.min_font_px:.1f}' data-text-outside='{len(d.text_outside)}' "
                    f"src='data:image/png;base64,{base64.b64encode(d.png).decode()}'>"
                    f"<figcaption>{_inline(caption)}</figcaption></figure>"
                )
            else:
                md += [not_drawn(stem, caption), ""]
                body.append(f"<p>{html.escape(not_drawn(stem, caption))}</p>")
        if s.notes:
            md += ["Not measured:", ""] + [f"- {n}" for n in s.notes] + [""]
            body.append("<p>Not measured:</p><ul>" + "".join(f"<li>{_inline(n)}</li>" for n in s.notes) + "</ul>")
        if s.csv is not None and not s.csv.empty:
            s.csv.to_csv(folder.path(f"{s.key}.csv"), index=False)
            written.append(folder.out / f"{s.key}.csv")
    written.insert(0, folder.write("report.md", "\n".join(md) + "\n"))
    summary = next((s for s in secs if s.key == "summary" and s.tables), None)
    if summary is not None:  # the summary alone, ready to publish
        written.append(folder.write("summary.md", _summary_md(summary, header, shown, drawn)))
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>triaudit report</title><style>"
        "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        "th{background:#f4f4f4}img{max-width:100%;height:auto}figcaption{color:#555;font-size:90%}"
        "code{background:#f4f4f4;padding:0 .2em}"
        ".runs{color:#555;font-size:85%}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )
    written.insert(1, folder.write("report.html", page))
    if tidy_csv:
        _write_tidy(rs.table, folder.path("tidy.csv"))
        written.append(folder.out / "tidy.csv")
    return written


def _summary_md(s, header: list[str], shown, drawn: dict) -> str:
    md = ["# triaudit summary", "", header[2] if len(header) > 2 else "", ""]
    if s.banner:
        md += [f"**{s.banner}**", ""]
    for caption, t in s.tables:
        under = _runs_under(t, shown)
        md += [f"## {caption}", "", _md_table(t), ""] + ([under, ""] if under else [])
    md += [x for p in s.paragraphs for x in (p, "")]
    md += [x for stem, caption, _ in s.figures if stem in drawn for x in (f"![{caption}]({stem}.png)", "")]
    return "\n".join(md) + "\n"


def _write_tidy(df: pd.DataFrame, path: Path) -> None:
    # Always with its header, so scripts reading it need no special case for an empty report.
    if df.empty:
        pd.DataFrame(columns=[c for c in BASE_COLUMNS if c != "file"] + ["complete"]).to_csv(path, index=False)
    else:
        df[[c for c in df.columns if c not in ("file", "run_dir")]].to_csv(path, index=False)
