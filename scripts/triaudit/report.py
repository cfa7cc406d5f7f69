"""`triaudit report`: result files -> per-corner tables (Markdown, CSV), PNG plots and one
self-contained HTML page (tables and plots embedded; opens with no server).

Cards are columns; cells are the median over repetitions ± half the min-max range, with the
fraction of the datasheet peak where the card is known (specs.py). Runs whose manifest says
they were interrupted are left out unless asked for, and listed. Never writes over an input.
"""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import pandas as pd

from . import corners
from .frames import unknown_cards
from .table import expand_paths, load_table


class ReportError(ValueError):
    pass


def _md_table(t: pd.DataFrame) -> str:
    idx_names = [n or "" for n in (t.index.names or [""])]
    cols = [str(c) for c in t.columns]
    lines = ["| " + " | ".join(idx_names + cols) + " |", "|" + "---|" * (len(idx_names) + len(cols))]
    for key, row in t.iterrows():
        keys = key if isinstance(key, tuple) else (key,)
        vals = ["" if pd.isna(v) else str(v) for v in row.tolist()]
        lines.append("| " + " | ".join([str(k) for k in keys] + vals) + " |")
    return "\n".join(lines)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


def build(paths: list[Path], include_incomplete: bool = False):
    files = expand_paths(paths)
    df = load_table(files)
    header = ["# triaudit report", ""]
    if not df.empty and "complete" in df:
        partial = sorted(set(df.loc[~df["complete"], "run"]))
        if partial:
            header.append(("Interrupted runs (marked incomplete in their manifest), " +
                           ("included" if include_incomplete else "left out") + ": " + ", ".join(partial)) + ".")
            header.append("")
            if not include_incomplete:
                df = df[df["complete"]]
    cards = sorted(c for c in df["card"].dropna().unique()) if not df.empty else []
    header.append(f"{len(files)} result file(s); cards: {', '.join(cards) if cards else 'none'}.")
    unlatched = sorted(f for f, ctx in df.attrs.get("contexts", {}).items()
                       if str(ctx.get("stream_latch", "on")).startswith("off")) if not df.empty else []
    if unlatched:
        header.append("Measured with the stream hold off (TRIAUDIT_NO_LATCH, for profilers): their times include "
                      "launch gaps: " + ", ".join(Path(f).name for f in unlatched) + ".")
    unknown = unknown_cards(cards)
    if unknown:
        header.append(f"No datasheet figures for {', '.join(unknown)}: no fraction of peak is shown for "
                      "them (the device-reported memory peak still is).")
    if not files:
        header.append("No result files found: run the suite on a GPU first (`triaudit run`).")
    header.append("")
    return df, header, corners.all_sections(df) if not df.empty else []


def write_report(paths: list[Path], out: Path, include_incomplete: bool = False) -> list[Path]:
    files = expand_paths(paths)
    out = Path(out)
    inputs = {f.resolve() for f in files}
    df, header, sections = build(files, include_incomplete)
    names = ["report.md", "report.html", "tidy.csv"] + [f"{s.key}.csv" for s in sections] + \
            [f"{stem}.png" for s in sections for stem, _, _ in s.figures]
    if not sections:
        names += ["stream.csv"]
    for n in names:
        if (out / n).resolve() in inputs:
            raise ReportError(f"refusing to write {out / n}: it is one of the inputs")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    md = list(header)
    body = [f"<h1>triaudit report</h1>"] + [f"<p>{html.escape(h)}</p>" for h in header[2:] if h]
    for s in sections:
        if not s.tables and not s.figures and not s.notes:
            continue
        md += [f"## {s.title}", ""]
        body.append(f"<h2>{html.escape(s.title)}</h2>")
        for caption, t in s.tables:
            md += [f"### {caption}", "", _md_table(t), ""]
            body += [f"<h3>{html.escape(caption)}</h3>", t.to_html(escape=True, na_rep="", border=0)]
        for stem, caption, fig in s.figures:
            data = _png(fig)
            (out / f"{stem}.png").write_bytes(data)
            written.append(out / f"{stem}.png")
            md += [f"![{caption}]({stem}.png)", ""]
            body.append(f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,"
                        f"{base64.b64encode(data).decode()}'><figcaption>{html.escape(caption)}</figcaption></figure>")
            import matplotlib.pyplot as plt
            plt.close(fig)
        if s.notes:
            md += ["Not measured:", ""] + [f"- {n}" for n in s.notes] + [""]
            body.append("<p>Not measured:</p><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in s.notes) + "</ul>")
        if s.csv is not None and not s.csv.empty:
            s.csv.to_csv(out / f"{s.key}.csv", index=False)
            written.append(out / f"{s.key}.csv")
    if not any(s.tables for s in sections):
        md.append("No measured results in these runs.")
        body.append("<p>No measured results in these runs.</p>")
        if not (out / "stream.csv").exists() or (out / "stream.csv").resolve() not in inputs:
            pd.DataFrame(columns=["op", "type", "cache", "bytes"]).to_csv(out / "stream.csv", index=False)
            written.append(out / "stream.csv")
    (out / "report.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    written.insert(0, out / "report.md")
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>triaudit report</title><style>"
            "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
            "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
            "th{background:#f4f4f4}img{max-width:100%}figcaption{color:#555;font-size:90%}</style></head><body>"
            + "\n".join(body) + "</body></html>\n")
    (out / "report.html").write_text(page, encoding="utf-8")
    written.insert(1, out / "report.html")
    df.drop(columns=[c for c in df.columns if c == "file"]).to_csv(out / "tidy.csv", index=False) if not df.empty else \
        pd.DataFrame().to_csv(out / "tidy.csv", index=False)
    written.append(out / "tidy.csv")
    return written
