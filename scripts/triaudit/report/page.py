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
from triaudit.results.reading import Reading, collector_paused
from triaudit.results.table import BASE_COLUMNS, ResultSet, load_results

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
    tidy_csv: bool = False,
) -> list[Path]:
    """The report of the result files under `paths`, in the folder `out` (report/output.py: built
    aside, moved into place, nothing stale left); `tidy_csv`: also the whole tidy table as tidy.csv."""
    with collector_paused():
        return _write_report(paths, out, include_incomplete, all_runs, prices, notes, tidy_csv)


def _write_report(paths, out, include_incomplete, all_runs, prices, notes, tidy_csv) -> list[Path]:
    reading = Reading.start(paths)
    try:
        inputs = {f.resolve() for f in reading.files}
        if Path(out).exists() and not Path(out).is_dir():
            raise ReportError(f"--out {out}: exists and is not a folder (the report is a folder of files)")
        rs, header = _frame(paths, include_incomplete, all_runs, notes, reading)
    finally:
        reading.close()
    df = rs.table
    secs = sections.all_sections(rs, prices=prices) if not df.empty else []  # prices: sections/cost.py Prices
    names = (
        ["report.md", "report.html"]
        + [f"{s.key}.csv" for s in secs if s.csv is not None and not s.csv.empty]
        + [f"{stem}.png" for s in secs for stem, _, _ in s.figures]
        + (["stream.csv"] if not any(s.tables for s in secs) else [])
        + (["tidy.csv"] if tidy_csv else [])
    )
    folder = ReportFolder(out, inputs)
    try:
        folder.check(names)
        written = _write_files(folder, rs, header, secs, tidy_csv)
        folder.commit()
    finally:
        folder.discard()
        if secs and any(s.figures for s in secs):
            import matplotlib.pyplot as plt

            for s in secs:
                for _, _, fig in s.figures:
                    plt.close(fig)
    return written


def _write_files(folder: ReportFolder, rs: ResultSet, header: list[str], secs: list, tidy_csv: bool) -> list[Path]:
    shown, written = rs.shown, []
    pngs = figures.render([(stem, fig) for s in secs for stem, _, fig in s.figures])
    drawn = {stem: png for stem, png in pngs.items() if isinstance(png, bytes)}

    def not_drawn(stem: str, caption: str) -> str:
        return f"{caption}: not drawn ({pngs[stem]!s})."

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
            if stem in drawn:
                written.append(folder.write(f"{stem}.png", drawn[stem]))
                md += [f"![{caption}]({stem}.png)", ""]
                body.append(
                    f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,"
                    f"{base64.b64encode(drawn[stem]).decode()}'><figcaption>{html.escape(caption)}</figcaption></figure>"
                )
            else:
                md += [not_drawn(stem, caption), ""]
                body.append(f"<p>{html.escape(not_drawn(stem, caption))}</p>")
        if s.notes:
            md += ["Not measured:", ""] + [f"- {n}" for n in s.notes] + [""]
            body.append("<p>Not measured:</p><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in s.notes) + "</ul>")
        if s.csv is not None and not s.csv.empty:
            s.csv.to_csv(folder.path(f"{s.key}.csv"), index=False)
            written.append(folder.out / f"{s.key}.csv")
    if not any(s.tables for s in secs):
        md.append("No measured results in these runs.")
        body.append("<p>No measured results in these runs.</p>")
        pd.DataFrame(columns=["op", "type", "cache", "bytes"]).to_csv(folder.path("stream.csv"), index=False)
        written.append(folder.out / "stream.csv")
    written.insert(0, folder.write("report.md", "\n".join(md) + "\n"))
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>triaudit report</title><style>"
        "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        "th{background:#f4f4f4}img{max-width:100%}figcaption{color:#555;font-size:90%}"
        ".runs{color:#555;font-size:85%}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )
    written.insert(1, folder.write("report.html", page))
    if tidy_csv:
        _write_tidy(rs.table, folder.path("tidy.csv"))
        written.append(folder.out / "tidy.csv")
    return written


def _write_tidy(df: pd.DataFrame, path: Path) -> None:
    # Always with its header, so scripts reading it need no special case for an empty report.
    if df.empty:
        pd.DataFrame(columns=[c for c in BASE_COLUMNS if c != "file"] + ["complete"]).to_csv(path, index=False)
    else:
        df[[c for c in df.columns if c not in ("file", "run_dir")]].to_csv(path, index=False)
